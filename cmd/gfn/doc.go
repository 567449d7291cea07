// Command gfn trains amortized samplers (GFlowNets) with an adaptive
// Teacher, and reproduces the paper's experiments.
//
//	gfn train    train and evaluate (progress bar, summary, metrics, plots, checkpoint)
//	gfn sample   draw samples from a checkpoint's Student to CSV
//	gfn eval     evaluate a checkpoint (exact and empirical metrics, JSON)
//	gfn bench    gfn bench speed | gfn bench grid --table …
//
// "gfn <command> --help" lists every flag with its default. main is thin:
// run(ctx, args, stdout, stderr) does the work, and usage errors exit with
// status 2.
package main
