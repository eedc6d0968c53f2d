package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestNewDataPullCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want dataPullOptions
	}{
		{nil, dataPullOptions{}},
		{[]string{"--from", "https://example.org/d/", "--dir", "out"}, dataPullOptions{From: "https://example.org/d/", Dir: "out"}},
		{[]string{"--set", "math500", "--set", "aime24"}, dataPullOptions{Sets: []string{"math500", "aime24"}}},
	} {
		var got *dataPullOptions
		if _, _, err := execute(newDataPullCmd(func(_ context.Context, o *dataPullOptions) error { got = o; return nil }), "", tc.args...); err != nil {
			t.Fatalf("data pull %q: %v", tc.args, err)
		}
		got.Out = nil
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("data pull %q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func TestDataListRun(t *testing.T) {
	var out bytes.Buffer
	if err := runDataList(&dataListOptions{Dir: t.TempDir(), Out: &out}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), " missing\n"); n != 6 {
		t.Errorf("data list on an empty folder shows %d missing sets, want 6:\n%s", n, out.String())
	}
}

func TestDataPullUnknownSet(t *testing.T) {
	_, _, err := runCLI(t, "", "data", "pull", "--dir", t.TempDir(), "--from", t.TempDir(), "--set", "gsm8k")
	if err == nil || !strings.Contains(err.Error(), `unknown set "gsm8k"`) {
		t.Errorf("data pull --set gsm8k: error %v", err)
	}
}

// TestDataPullHelpSaysChecksumIsRecorded checks that `data pull --help` says
// plainly that dapo_math_17k's sha256 is recorded at the first download and
// checked on every later one.
func TestDataPullHelpSaysChecksumIsRecorded(t *testing.T) {
	out := mustRunCLI(t, "data", "pull", "--help")
	for _, want := range []string{"--set dapo_math_17k", "first download\nrecords the sha256", "every later pull or check", "refused with both checksums"} {
		if !strings.Contains(out, want) {
			t.Errorf("data pull --help does not say %q:\n%s", want, out)
		}
	}
}
