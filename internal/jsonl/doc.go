// Package jsonl reads JSON Lines files one object at a time, with line numbers
// in every error, and without bufio.Scanner's 64 KiB line limit. It also holds
// the plumbing every JSONL-in, JSONL-out command shares: Files opens the input
// (a path, or "-" for the given standard input) and the output (a path written
// atomically, or "-" for the given standard output), and Ordered edits one
// object line while keeping its other fields, their order and their bytes.
// WriteLine is the one writer of a JSON line (no HTML escaping, so that
// <|im_end|> stays as it is) that every JSONL file mathrl writes goes through.
// Ordered.Parse and DecodeString read well-formed lines with a scanner of
// their own, several times faster than encoding/json's Decoder, and leave
// every other line, and the wording of its error, to encoding/json.
package jsonl
