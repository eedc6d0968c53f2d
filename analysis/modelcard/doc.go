// Package modelcard reads the numbers that the seed model cards publish, kept
// as CSV files in results/model_cards/: benchmark accuracies, the budget
// table, the scorer table and the training setups. Each file is named
// <card>_<table>.csv and each row names its card; Load checks both, every
// header and every cell. The package holds no numbers itself, and computes
// nothing: comparing the cards with measurements is left to analysis/metrics,
// analysis/plots and the notebooks.
package modelcard
