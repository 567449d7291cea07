package main

// The documentation's flags against the CLI: every --flag word in
// README.md and docs/*.md must exist on the command it is documented
// under, and every default the docs state must be the CLI's.
//
// Conventions (docs/cli.md, "How these pages are checked", says the same):
//
//   - A flag inside a gfn command line (a code span or code-block line
//     holding "gfn <command> ...") belongs to that command; for gfn train,
//     its --task, --method, --preset and --reward-cmd choose the family
//     help the flag is looked up in (a train line without --task takes the
//     task of the section's context, below, or the grid's).
//   - Any other --flag word belongs to the section's context, set by a
//     comment line such as "<!-- flags: train task=25gmm | bench diffusion -->"
//     (commands separated by "|", key=value for the selecting flags) until
//     the next one; it must exist on at least one of them. Before the first
//     such comment a file's context is every command.
//   - A default is stated as a flag's code span followed by "(default X)":
//     "`--eval-every` (default 100)". X must equal the default the command's
//     --help prints (numbers compared as numbers; a flag whose help shows
//     no default has its zero value: 0, false or "").
//   - Flags of other programs the docs quote (TensorBoard, sbatch, the
//     authors' scripts) are listed in foreignFlags.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// foreignFlags are flags of other programs that the docs name.
var foreignFlags = map[string]string{
	"logdir":        "tensorboard --logdir",
	"time":          "sbatch, inside --slurm-args",
	"mem":           "sbatch, inside --slurm-args",
	"partition":     "sbatch, inside --slurm-args",
	"cpus-per-task": "sbatch",
	"array":         "sbatch",
	"adv_freq":      "the authors' diffusion code",
	"both_ways":     "gfn-diffusion (Sendera et al.)",
	"clipping":      "gfn-diffusion (Sendera et al.)",
	"harmonics_dim": "the authors' diffusion code",
}

// docFlag is what a command's --help says of one flag.
type docFlag struct {
	def    string // the printed default, quotes removed; "" when none is printed
	hasDef bool
	typ    string // the type word Go's flag package prints ("" for bool)
}

var (
	helpFlagLine = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_-]*)(?: ([^\t]*))?(?:\t(.*))?$`)
	helpDefault  = regexp.MustCompile(`\(default ((?:[^()]|\([^()]*\))*)\)\s*$`)
)

// parseHelp reads the flags of a --help text in the flag package's format.
func parseHelp(text string) map[string]docFlag {
	flags := map[string]docFlag{}
	var name, typ string
	var desc []string
	flush := func() {
		if name == "" {
			return
		}
		f := docFlag{typ: typ}
		if m := helpDefault.FindStringSubmatch(strings.Join(desc, " ")); m != nil {
			f.def, f.hasDef = strings.Trim(m[1], `"`), true
		}
		flags[name] = f
		name, typ, desc = "", "", nil
	}
	for _, line := range strings.Split(text, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			flush()
			name, typ = m[1], strings.TrimSpace(m[2])
			if m[3] != "" { // a one-letter bool: "-x\tdesc"
				desc = append(desc, m[3])
			}
			continue
		}
		if name != "" && strings.HasPrefix(line, "    ") {
			desc = append(desc, strings.TrimSpace(line))
			continue
		}
		flush()
	}
	flush()
	return flags
}

// helps caches each command's parsed --help by its argument list.
type helps map[string]map[string]docFlag

func (h helps) get(t *testing.T, args []string) (map[string]docFlag, error) {
	key := strings.Join(args, " ")
	if f, ok := h[key]; ok {
		return f, nil
	}
	out, _, err := runCLI(append(append([]string{}, args...), "--help")...)
	if err != nil {
		return nil, fmt.Errorf("gfn %s --help: %v", key, err)
	}
	f := parseHelp(out)
	if len(f) == 0 && !strings.Contains(out, "Flags:") {
		return nil, fmt.Errorf("gfn %s --help printed no flags section", key)
	}
	h[key] = f
	return f, nil
}

// everyCommand is the context before a file's first flags comment.
var everyCommand = [][]string{
	{"train"}, {"train", "--task", "25gmm"}, {"train", "--task", "25gmm", "--method", "smc"},
	{"train", "--task", "25gmm", "--method", "ggns"}, {"train", "--task", "tfbind8"},
	{"train", "--reward-cmd", "true", "--task", "seq"}, {"train", "--reward-cmd", "true", "--task", "points"},
	{"train", "--reward-cmd", "true", "--task", "hypergrid"},
	{"sample"}, {"eval"}, {"reward"}, {"view"}, {"migrate"}, {"version"},
	{"bench", "speed"}, {"bench", "grid"}, {"bench", "diffusion"}, {"bench", "biochem"}, {"bench", "objectives"},
}

var (
	benchNames   = map[string]bool{"speed": true, "grid": true, "diffusion": true, "biochem": true, "objectives": true}
	commandNames = map[string]bool{"train": true, "sample": true, "eval": true, "reward": true, "bench": true, "view": true, "migrate": true, "version": true, "help": true}
	// selectors are the train flags that choose which help applies.
	selectors = []string{"task", "method", "preset", "reward-cmd"}

	contextLine = regexp.MustCompile(`^\s*<!--\s*flags:\s*(.*?)\s*-->\s*$`)
	codeSpan    = regexp.MustCompile("`[^`]+`")
	gfnCall     = regexp.MustCompile(`(?:^|[\s/($])gfn\s+([a-z]+)`)
	flagWord    = regexp.MustCompile(`(?:^|[\s\[(|"'` + "`" + `,;])--([A-Za-z0-9][A-Za-z0-9_-]*)`)
	quoted      = regexp.MustCompile(`"[^"]*"`)
	flagDefault = regexp.MustCompile("`--([A-Za-z0-9][A-Za-z0-9_-]*)[^`]*`\\s*\\(default ([^)]*)\\)")
)

// parseContext turns "train task=25gmm | bench diffusion" into help argument lists.
func parseContext(s string) ([][]string, error) {
	if strings.TrimSpace(s) == "all" {
		return everyCommand, nil
	}
	var ctx [][]string
	for _, part := range strings.Split(s, "|") {
		var args []string
		for _, w := range strings.Fields(part) {
			if k, v, ok := strings.Cut(w, "="); ok {
				args = append(args, "--"+k, v)
			} else {
				args = append(args, w)
			}
		}
		if len(args) == 0 || !commandNames[args[0]] {
			return nil, fmt.Errorf("flags comment %q: %q is not a gfn command", s, part)
		}
		ctx = append(ctx, args)
	}
	return ctx, nil
}

// invocation is one "gfn <command> ..." found in a code span or code line.
type invocation struct {
	helps [][]string // the help argument lists that document its flags (one of them)
	flags []string
	text  string
}

// invocations finds the gfn command lines in code text; the rest of the
// text (before the first call) is returned as prose.
func invocations(code string, ctx [][]string) (calls []invocation, prose string) {
	locs := gfnCall.FindAllStringSubmatchIndex(code, -1)
	if len(locs) == 0 {
		return nil, code
	}
	prose = code[:locs[0][0]]
	for i, loc := range locs {
		end := len(code)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		text := code[loc[2]:end]
		for _, stop := range []string{" #", "&&", ";"} {
			if j := strings.Index(text, stop); j >= 0 {
				text = text[:j]
			}
		}
		words := strings.Fields(quoted.ReplaceAllString(text, `""`))
		cmd := words[0]
		if !commandNames[cmd] {
			prose += " " + text // "gfn trains ..." in a sentence
			continue
		}
		if cmd == "help" {
			continue
		}
		helps := [][]string{{cmd}}
		switch {
		case cmd == "bench" && len(words) > 1 && benchNames[words[1]]:
			helps[0] = append(helps[0], words[1])
		case cmd == "bench": // "gfn bench … --out DIR": any bench
			helps = nil
			for b := range benchNames {
				helps = append(helps, []string{"bench", b})
			}
			sort.Slice(helps, func(i, j int) bool { return helps[i][1] < helps[j][1] })
		case cmd == "train":
			helps[0] = append(helps[0], trainSelectors(words[1:], ctx)...)
		}
		call := invocation{helps: helps, text: strings.TrimSpace("gfn " + text)}
		for _, m := range flagWord.FindAllStringSubmatch(" "+strings.Join(words, " "), -1) {
			call.flags = append(call.flags, m[1])
		}
		calls = append(calls, call)
	}
	return calls, prose
}

// trainSelectors are the selecting flags of a gfn train line, with the
// context's task when the line names none.
func trainSelectors(words []string, ctx [][]string) []string {
	var sel []string
	has := map[string]bool{}
	for i, w := range words {
		name, val, eq := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "--") {
			continue
		}
		if !eq {
			if i+1 >= len(words) {
				continue
			}
			val = words[i+1]
		}
		val, _, _ = strings.Cut(val, "|") // "--task tfbind8|qm9str": the first
		for _, s := range selectors {
			if name != s || has[s] {
				continue
			}
			if s == "reward-cmd" { // any program: the help is the same
				sel = append(sel, "--"+s, "true")
				has[s] = true
			} else if val != "" && strings.ToUpper(val) != val && !strings.HasPrefix(val, "-") {
				sel = append(sel, "--"+s, val)
				has[s] = true
			}
		}
	}
	if has["task"] || (len(ctx) > 0 && &ctx[0] == &everyCommand[0]) {
		return sel
	}
	for _, c := range ctx {
		if c[0] != "train" || len(c) == 1 {
			continue
		}
		// The context's task (and program), then the line's other selectors.
		out := append([]string{}, c[1:]...)
		for i := 0; i+1 < len(sel); i += 2 {
			if !contains(out, sel[i]) {
				out = append(out, sel[i], sel[i+1])
			}
		}
		return out
	}
	return sel
}

func contains(s []string, w string) bool {
	for _, x := range s {
		if x == w {
			return true
		}
	}
	return false
}

// sameDefault compares a documented default with the CLI's.
func sameDefault(doc string, f docFlag) bool {
	doc = strings.Trim(strings.TrimSpace(doc), "`\"")
	cli := f.def
	if !f.hasDef {
		switch f.typ {
		case "", "bool":
			cli = "false"
		case "int", "uint", "float", "int64", "uint64", "duration":
			cli = "0"
		default:
			cli = ""
		}
	}
	if doc == cli {
		return true
	}
	a, err1 := strconv.ParseFloat(strings.ReplaceAll(doc, ",", ""), 64)
	b, err2 := strconv.ParseFloat(cli, 64)
	return err1 == nil && err2 == nil && a == b
}

func docFiles(t *testing.T) []string {
	files := []string{filepath.Join("..", "..", "README.md")}
	more, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, more...)
}

// TestDocsFlags: every flag the docs name exists on its command, and the
// defaults they state are the CLI's.
func TestDocsFlags(t *testing.T) {
	h := helps{}
	checked, defaults := 0, 0
	for _, path := range docFiles(t) {
		name := strings.TrimPrefix(path, filepath.Join("..", "..")+string(filepath.Separator))
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := everyCommand
		var para []string
		paraLine := 0
		inCode := false
		// check looks at one paragraph (or one code-block line) under ctx.
		check := func(text string, line int, code bool) {
			where := fmt.Sprintf("%s:%d", name, line)
			var prose []string
			var calls []invocation
			if code {
				c, p := invocations(text, ctx)
				calls, prose = c, []string{p}
			} else {
				rest := codeSpan.ReplaceAllStringFunc(text, func(span string) string {
					c, p := invocations(strings.Trim(span, "`"), ctx)
					calls = append(calls, c...)
					if c != nil {
						prose = append(prose, p)
						return " "
					}
					return span
				})
				prose = append(prose, rest)
			}
			for _, c := range calls {
				for _, args := range c.helps {
					if _, err := h.get(t, args); err != nil {
						t.Errorf("%s: %q: %v", where, c.text, err)
					}
				}
				for _, fl := range c.flags {
					checked++
					if _, ok := lookup(t, h, c.helps, fl); !ok && fl != "help" && foreignFlags[fl] == "" {
						t.Errorf("%s: --%s is not a flag of %s (in %q)", where, fl, describe(c.helps), c.text)
					}
				}
			}
			for _, p := range prose {
				for _, m := range flagWord.FindAllStringSubmatch(p, -1) {
					fl := m[1]
					checked++
					if foreignFlags[fl] != "" || fl == "help" {
						continue
					}
					if _, ok := lookup(t, h, ctx, fl); !ok {
						t.Errorf("%s: --%s is not a flag of %s", where, fl, describe(ctx))
					}
				}
			}
			// Defaults: "`--flag ...` (default X)".
			for _, m := range flagDefault.FindAllStringSubmatch(text, -1) {
				fl, doc := m[1], m[2]
				defaults++
				var f docFlag
				var ok bool
				var on string
				span := strings.TrimSpace(strings.SplitN(m[0], "`", 3)[1])
				if c, _ := invocations(span, ctx); len(c) > 0 {
					f, ok = lookup(t, h, c[0].helps, fl)
					on = describe(c[0].helps)
				} else {
					f, ok = lookup(t, h, ctx, fl)
					on = describe(ctx)
				}
				if !ok {
					t.Errorf("%s: default of --%s: no such flag on %s", where, fl, on)
					continue
				}
				if !sameDefault(doc, f) {
					cli := f.def
					if !f.hasDef {
						cli = "(none printed: the zero value)"
					}
					t.Errorf("%s: --%s (default %s) in the docs, but %s --help says %s", where, fl, doc, on, cli)
				}
			}
		}
		flushPara := func() {
			if len(para) > 0 {
				check(strings.Join(para, "\n"), paraLine, false)
			}
			para = nil
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				flushPara()
				inCode = !inCode
				continue
			}
			if inCode {
				check(line, n, true)
				continue
			}
			if m := contextLine.FindStringSubmatch(line); m != nil {
				flushPara()
				c, err := parseContext(m[1])
				if err != nil {
					t.Errorf("%s:%d: %v", name, n, err)
					continue
				}
				for _, args := range c {
					if _, err := h.get(t, args); err != nil {
						t.Errorf("%s:%d: %v", name, n, err)
					}
				}
				ctx = c
				continue
			}
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				flushPara()
				if strings.HasPrefix(line, "#") {
					check(line, n, false)
				}
				continue
			}
			if len(para) == 0 {
				paraLine = n
			}
			para = append(para, line)
		}
		flushPara()
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 || defaults < 20 {
		t.Errorf("only %d flag mentions and %d stated defaults checked: are the docs where the test looks?", checked, defaults)
	}
	t.Logf("%d flag mentions, %d stated defaults checked in %d help texts", checked, defaults, len(h))
}

// lookup finds a flag on the first context command that has it.
func lookup(t *testing.T, h helps, ctx [][]string, name string) (docFlag, bool) {
	for _, args := range ctx {
		flags, err := h.get(t, args)
		if err != nil {
			continue
		}
		if f, ok := flags[name]; ok {
			return f, true
		}
	}
	return docFlag{}, false
}

func describe(ctx [][]string) string {
	var s []string
	for _, c := range ctx {
		s = append(s, "gfn "+strings.Join(c, " "))
	}
	if len(s) > 4 {
		return fmt.Sprintf("any gfn command (%d help texts)", len(s))
	}
	sort.Strings(s)
	return strings.Join(s, " or ")
}

// TestParseHelp pins the help parser on the flag package's three shapes.
func TestParseHelp(t *testing.T) {
	f := parseHelp("Usage: x\n\nFlags:\n  -C float\n    \tweight (default 19)\n  -ls\n    \tsearch\n" +
		"  -out string\n    \tdir (default \"runs/x\")\n  -slurm-args string\n    \toptions, like \"--time=2\",\n    \teach a line\n" +
		"  -x\tone letter (default true)\n  -hidden value\n    \twidths (default 256,256)\n")
	want := map[string]docFlag{
		"C": {"19", true, "float"}, "ls": {"", false, ""}, "out": {"runs/x", true, "string"},
		"slurm-args": {"", false, "string"}, "x": {"true", true, ""}, "hidden": {"256,256", true, "value"},
	}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Errorf("parseHelp:\n got %v\nwant %v", f, want)
	}
	if !sameDefault("1e-3", docFlag{"0.001", true, "float"}) || sameDefault("0", docFlag{"1", true, "int"}) ||
		!sameDefault("0", docFlag{typ: "int"}) || !sameDefault("`256,256`", docFlag{"256,256", true, "value"}) {
		t.Error("sameDefault")
	}
}
