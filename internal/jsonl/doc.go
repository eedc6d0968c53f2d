// Package jsonl reads JSON Lines files one object at a time, with line numbers
// in every error, and without bufio.Scanner's 64 KiB line limit.
package jsonl
