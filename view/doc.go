// Package view is gfn view's model and HTTP handler: a local dashboard of
// the runs under some directories, which follows runs while they train.
//
// The model: a Scanner walks its roots and reads each run directory (one
// holding metrics.csv, summary.json, checkpoint.safetensors or
// run.RunningFile) into a Run: family, task, method and seed (from
// summary.json and config.json), its State (running while the process
// named by its running.json lives; finished once it wrote summary.json;
// else interrupted or failed at the step of its checkpoint, whose
// safetensors header alone is read), its wall time, its curve (Metrics,
// parsed strictly by ParseMetrics) and its figures; and each directory
// holding a bench table's results.md into a Bench. A file that cannot be
// read makes its run Unreadable with the reason, and the rest is served
// as before. Parsed curves are kept until their file's size or time
// changes, so that polling costs a directory walk.
//
// The handler (Server) renders the whole page on the server with
// html/template: the runs' table, one chart per column of metrics.csv
// with the checked runs overlaid, each run's summary and figures, and the
// bench tables (Markdown, a small converter for their headings, tables,
// lists and paragraphs). The page's one script polls /api/version every
// two seconds and, when a file changed, fetches the page's main part
// again; everything works without it except the updates. The page, its
// stylesheet and its script are embedded (no CDN, nothing fetched from
// elsewhere).
//
// Charts are SVG written by hand here (WriteChart) rather than drawn by
// gonum/plot (which gfn uses for the PNG figures a run writes) or a
// JavaScript library: the SVG is part of the server's HTML, so the DOM
// holds the curves as soon as the page loads (a headless browser's dump
// and the handler tests see them, and no script has to run); it scales
// with the page, its text stays text and each line carries a tooltip and
// data attributes (run, points, last value); and a chart of a few hundred
// points is a few kilobytes from a hundred lines of code, with no
// dependency and no vendored licence. gonum/plot's SVG back end writes a
// fixed-size canvas with its own font metrics, meant for files.
//
// The package prints nothing; cmd/gfn's view command serves it.
package view
