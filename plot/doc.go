// Package plot renders the figures of a run as PNG files: side-by-side
// heat maps of 2-D distributions (the paper's Fig. 2 and Fig. 6: target,
// Student, Teacher), samples of diffusion samplers over R^d drawn on the
// contours of the target's log density (the 25GMM figure, and a
// coordinate pair's marginal for Manywell: SamplesOnDensity), and line
// plots of training curves (modes found and L1 against reward calls). It
// only draws: the numbers come from package metrics and the run's records.
//
// Figures are meant for a paper: one tick notation per axis (plain
// decimals, a ×10^k factor in the axis label, or powers of ten on log
// axes), legends beside the axes rather than on the data, reference lines
// (Ref) where a value is known, a legend entry only for a line drawn, x
// axes over the whole run, colour bars, and a caption under each figure
// explaining its marks. What a chart shows is decided first, in a model
// (chartModel, colourScale) that the tests read, and drawn after, as
// gonum/plot keeps its plot model apart from its canvases.
package plot
