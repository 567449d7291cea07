// Package bench holds gfn's reproducible measurements: Speed and
// DiffusionSpeed time training iterations on the paper's grid and
// diffusion-sampler configurations and report the machine they ran on, so
// that runs on different machines can be compared; RunGrid and
// RunDiffusion reproduce the paper's grid and diffusion tables as
// resumable sets of gfn train runs, and write their results next to the
// paper's numbers.
package bench
