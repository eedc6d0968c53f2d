// Package data owns mathrl's datasets: the JSONL row schema (Row) and its
// validating reader, the converter for DAPO-Math-17k rows, the list of known
// sets with their committed sha256 checksums, and Pull, which copies or
// downloads those files into a local cache folder and checks every byte.
//
// The data files themselves are never part of the source tree. Pull brings them
// from a mirror folder, from an HTTP(S) URL base, or from DefaultBaseURL, and
// writes each file atomically only after its checksum matched.
//
// Scoring, metrics and training read rows through this package; it imports
// nothing of theirs.
package data
