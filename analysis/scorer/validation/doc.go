// Package validation runs the "correct by definition" check of the three
// scorers on real dataset labels: for every label it builds responses that
// state exactly that label (true-positive constructions) and responses that
// state another problem's, non-equivalent label (false-positive
// constructions), in five templates, and counts how each scorer judges them.
//
// It reads the datasets through package data and writes its tables as CSV
// and Markdown; the scoring itself is package scorer's.
package validation
