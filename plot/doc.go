// Package plot renders the figures of a run as PNG files: side-by-side
// heat maps of 2-D distributions (the paper's Fig. 2 and Fig. 6: target,
// Student, Teacher), samples of diffusion samplers over R^d drawn on the
// contours of the target's log density (the 25GMM figure, and a
// coordinate pair's marginal for Manywell: SamplesOnDensity), and line
// plots of training curves (modes found and L1 against reward calls). It
// only draws: the numbers come from package metrics and the run's records.
package plot
