package notebooks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The outputs below have the shapes GoNB v0.11.3 gives under nbconvert 6.5
// with allow_errors (seen in executed notebooks): a compile error is an
// "error" output, a panic or os.Exit(N) is stderr text ending in
// "exit status N", displays are display_data.

const png1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="

func nb(t *testing.T, cells ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"nbformat": 4, "nbformat_minor": 5, "metadata": map[string]any{}, "cells": cells})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func code(src string, outputs ...map[string]any) map[string]any {
	if outputs == nil {
		outputs = []map[string]any{}
	}
	return map[string]any{"cell_type": "code", "source": strings.SplitAfter(src, "\n"), "outputs": outputs, "metadata": map[string]any{}}
}

func md(src string) map[string]any {
	return map[string]any{"cell_type": "markdown", "source": src, "metadata": map[string]any{}}
}

func stream(name string, lines ...string) map[string]any {
	return map[string]any{"output_type": "stream", "name": name, "text": lines}
}

func image() map[string]any {
	return map[string]any{"output_type": "display_data", "metadata": map[string]any{}, "data": map[string]any{"image/png": png1x1}}
}

func TestCheck(t *testing.T) {
	setup := code("!*go mod edit -require=x@v0.0.0", stream("stderr", "go: added gonum.org/v1/plot v0.17.0\n"))
	decl := code("import \"fmt\"\n\nfunc show() {}")
	figure := code("%%\nshow(p)", image())
	for _, tc := range []struct {
		name  string
		cells []map[string]any
		cell  int    // failing cell, 1-based; 0 for a pass or a notebook-level error
		want  string // in the error; "" for a pass
	}{
		{"passes", []map[string]any{md("# t"), setup, decl, figure, code("%%\nfmt.Println(1)", stream("stdout", "1\n"))}, 0, ""},
		{"compile error", []map[string]any{setup, figure, code("%%\nx := undefinedThing + 1", map[string]any{
			"output_type": "error", "ename": "ERROR", "evalue": "./main.go:10:6: undefined: undefinedThing\n", "traceback": []string{}})},
			3, "undefined: undefinedThing"},
		{"panic", []map[string]any{md("# t"), figure, code("%%\npanic(\"boom\")", stream("stderr", "panic: boom\n", "\n", "goroutine 1 [running]:\n", "exit status 2\n"))},
			3, "runtime panic: panic: boom"},
		{"os.Exit", []map[string]any{figure, code("import \"os\"\n\n%%\nos.Exit(3)", stream("stderr", "exit status 3\n"))},
			2, "exit status 3"},
		{"failing shell command", []map[string]any{code("!false", stream("stderr", "exit status 1\n")), figure},
			1, "exit status 1"},
		{"no output", []map[string]any{figure, code("%%\nx := 1\n_ = x")}, 2, "produced no output"},
		{"only stderr", []map[string]any{figure, code("%%\nlog.Print(1)", stream("stderr", "2026/01/01 1\n"))}, 2, "produced no output"},
		{"no figure", []map[string]any{code("%%\nfmt.Println(1)", stream("stdout", "1\n"))}, 0, "shows no figure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check("x.ipynb", nb(t, tc.cells...))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want an error containing %q", err, tc.want)
			}
			var ce *CellError
			if tc.cell == 0 {
				if errors.As(err, &ce) {
					t.Errorf("got a cell error %v, want a notebook-level one", err)
				}
				return
			}
			if !errors.As(err, &ce) || ce.Cell != tc.cell || ce.Notebook != "x.ipynb" {
				t.Fatalf("Check = %v, want a *CellError for x.ipynb cell %d", err, tc.cell)
			}
		})
	}
}

func TestCheckRejectsNonNotebook(t *testing.T) {
	if err := Check("x.ipynb", []byte("not json")); err == nil {
		t.Error("Check accepted text that is not JSON")
	}
}
