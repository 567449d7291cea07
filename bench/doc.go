// Package bench holds gfn's reproducible measurements: Speed and
// DiffusionSpeed time training iterations on the paper's grid and
// diffusion-sampler configurations and report the machine they ran on, so
// that runs on different machines can be compared; the tables reproduce
// the paper's experiments as resumable sets of gfn train runs and write
// their results next to the paper's numbers.
//
// A table is a Table (GridRun, DiffusionRun, BiochemRun: a family's table
// with its options) and one runner serves them all: RunTable runs the
// unfinished runs (interrupted ones first, continued from their
// checkpoints) a few at a time and writes results.csv, results.md and the
// figures; TableStatus says where each run stands from its checkpoint's
// header, whatever its family; TableSlurm lists the runs as Slurm array
// tasks. --quick means the same in every family: one seed and a fraction
// of the budget, said at the top of results.md.
//
// A diffusion run whose final ELBO is below its first evaluation's
// diverged (DiffusionResult.Diverged): results.md names it and leaves it
// out of the means and stds, the figures out of the mean curves. The
// sequence-design table (§5.3: TFbind8, QM9str, sEHstr and L14-RNA1;
// on-policy TB, ε-exploration, PRT, PER, Teacher + PRT and Teacher + PER;
// 5 seeds) runs the cheap tasks first and seed by seed within a task. The
// paper reports only curves, so there are no numbers to set beside the
// results: WriteBiochemMarkdown tabulates each method's final modes
// found, ELBO, EUBO and log Z error (mean ± std over seeds) and checks the
// paper's statements about them as BiochemClaims, each a mechanical
// comparison of means (or of mean ± std bands) with a verdict of yes, no
// or not enough runs; BiochemFigure draws the paper's figure.
//
// Every table also runs as a Slurm array job, one task per run, with no
// scheduler of gfn's own: SlurmArray.Write writes TableSlurm's tasks as a
// batch script (each task runs gfn bench ... --slurm-task i) and a task
// list, and SlurmArray.RunTask does task i with the runner's rule (a
// finished run is skipped, an interrupted one resumed from its
// checkpoint), so that submitting the script again finishes the runs a
// first submission left.
package bench
