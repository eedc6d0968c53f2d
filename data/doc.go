// Package data owns mathrl's datasets: the JSONL row schema (Row), its
// validating reader and its writer (the published files' exact bytes), the
// converter for DAPO-Math-17k rows and a built-in sample of them, the list of
// known sets with their committed sha256 checksums (or, for DAPO-Math-17k, the
// one recorded at its first download), and Pull, which brings those files into
// a local cache folder and checks every byte.
//
// The data files themselves are never part of the source tree. Pull copies them
// from a mirror folder or downloads them from a mirror URL base; without a
// mirror it downloads each set's public origin at a pinned commit (Origins) and
// converts it to the published file. Either way a file is written, atomically,
// only after its sha256 matched. README.md in this folder lists every origin
// and how each file is made from it.
//
// Scoring, metrics and training read rows through this package; it imports
// nothing of theirs.
package data
