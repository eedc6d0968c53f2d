// Package runs reads the training run folders committed under results/runs
// (as `mathrl train --save DIR` writes them) and says where each result came
// from: the command, the commit, the config's checksum, the scorer and the
// engine, next to the run's final evaluation. It never runs a model.
package runs
