// Package plots draws mathrl's figures with gonum/plot: the model cards'
// benchmark bars, accuracy and truncation versus token budget, scorer
// acceptance bars, pass@k curves, training curves and ablation curves. Each
// figure builder takes tables (from analysis/metrics, analysis/modelcard,
// analysis/ablation or the scorer validation) and returns a *plot.Plot, or a
// grid of them, with a title, axis labels with units and a legend placed
// above the data, where it covers nothing; Save and SaveGrid write it as PNG
// and SVG. The package computes no metric itself. Every kind of figure has a
// golden image in testdata/golden (go test -update rewrites them).
//
// Figures drawn from simulated samples say so in their title and legend.
package plots
