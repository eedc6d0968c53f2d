// Package pyjson writes JSON the way Python's json.dumps(value,
// ensure_ascii=False) does with its default separators, which is what the
// tojson filter of Hugging Face chat templates produces and how mathrl's
// dataset files are written: ", " and ": "
// separators, object keys in the order they were written, non-ASCII characters
// as they are, no HTML escaping, and floats in Python's repr form (1.0, 1e-07).
//
// Values come in as JSON text and are re-written, so that key order survives;
// numbers are classified as Python's json.loads does: a literal with a '.', 'e'
// or 'E' is a float, any other an int.
package pyjson
