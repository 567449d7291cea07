// Package bench holds gfn's reproducible measurements: Speed and
// DiffusionSpeed time training iterations on the paper's grid and
// diffusion-sampler configurations and report the machine they ran on, so
// that runs on different machines can be compared; RunGrid and
// RunDiffusion reproduce the paper's grid and diffusion tables as
// resumable sets of gfn train runs, and write their results next to the
// paper's numbers. A diffusion run whose final ELBO is below its first
// evaluation's diverged (DiffusionResult.Diverged): results.md names it and
// leaves it out of the means and stds, the figures out of the mean curves.
//
// RunBiochem reproduces the paper's biological and chemical discovery
// experiments (§5.3: TFbind8, QM9str, sEHstr and L14-RNA1; on-policy TB,
// ε-exploration, PRT, PER, Teacher + PRT and Teacher + PER; 5 seeds) as
// one resumable set of gfn train runs, the cheap tasks first and seed by
// seed within a task. The paper reports only curves, so there are no
// numbers to set beside the results: WriteBiochemMarkdown tabulates each
// method's final modes found, ELBO, EUBO and log Z error (mean ± std over
// seeds) and checks the paper's statements about them as BiochemClaims,
// each a mechanical comparison of means (or of mean ± std bands) with a
// verdict of yes, no or not enough runs; BiochemFigure draws the paper's
// figure (a row per task; modes, ELBO and EUBO against rounds with mean ±
// std bands).
//
// Every table also runs as a Slurm array job, one task per run, with no
// scheduler of gfn's own: GridTable.SlurmTasks, DiffusionTable.SlurmTasks
// and BiochemSlurmTasks list a table's runs, SlurmArray.Write writes them
// as a batch script (each task runs gfn bench ... --slurm-task i) and a
// task list, and SlurmArray.RunTask does task i with the Run functions'
// rule (a finished run is skipped, an interrupted one resumed from its
// checkpoint), so that submitting the script again finishes the runs a
// first submission left.
package bench
