// Package plots draws mathrl's figures with gonum/plot: the model cards'
// benchmark bars, accuracy and truncation versus token budget, scorer
// acceptance bars, pass@k curves and training curves. Each figure builder
// takes tables (from analysis/metrics, analysis/modelcard or the scorer
// validation) and returns a *plot.Plot, or a grid of them, with a title, axis
// labels and a legend; Save and SaveGrid write it as PNG and SVG. The package
// computes no metric itself.
//
// Figures drawn from simulated samples say so in their title and legend.
package plots
