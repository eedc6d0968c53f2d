package main

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNewNotebooksCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		only []string
		out  string
		tmo  time.Duration
	}{
		{[]string{"run"}, nil, filepath.Join("results", "notebooks"), 10 * time.Minute},
		{[]string{"run", "budgets", "--out", "/tmp/nb", "--timeout", "2m"}, []string{"budgets"}, "/tmp/nb", 2 * time.Minute},
	} {
		var got *notebooksRunOptions
		cmd := newNotebooksCmd(func(_ context.Context, o *notebooksRunOptions) error { got = o; return nil })
		if _, _, err := execute(cmd, "", tc.args...); err != nil {
			t.Fatalf("notebooks %q: %v", tc.args, err)
		}
		if (len(got.Only) > 0 || len(tc.only) > 0) && !reflect.DeepEqual(got.Only, tc.only) || got.Options.Out != tc.out || got.Timeout != tc.tmo ||
			got.Dir != "notebooks" || got.Jupyter != "/usr/bin/jupyter" || got.Kernel != "gonb" {
			t.Errorf("notebooks %q: options %+v", tc.args, got.Options)
		}
	}
}

func TestNotebooksRunNamesMissingNotebook(t *testing.T) {
	opts := &notebooksRunOptions{Stdout: &bytes.Buffer{}}
	opts.Dir, opts.Options.Out = t.TempDir(), t.TempDir()
	opts.Only = []string{"nope"}
	err := runNotebooks(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "no notebook nope.ipynb") {
		t.Errorf("err = %v", err)
	}
}
