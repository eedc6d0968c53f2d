package rollouts

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

func TestWriteFileReadFileRoundTrip(t *testing.T) {
	run := t.TempDir()
	recs := []Record{scripted(0, 0, 1.5, toolTrajectory), scripted(0, 1, -0.5, toolTrajectory)}
	if err := WriteFile(Path(run, 3), recs); err != nil {
		t.Fatal(err)
	}
	got, err := Load(run, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Errorf("read back\n%+v\nwrote\n%+v", got, recs)
	}
	data, _ := os.ReadFile(Path(run, 3))
	if !strings.Contains(string(data), `"<tool_call>"`) {
		t.Errorf("special tokens written escaped: %.200s", data)
	}
}

func TestReadErrorsNameFileLineField(t *testing.T) {
	good := scripted(0, 0, 1, toolTrajectory)
	short := scripted(0, 1, 1, toolTrajectory)
	short.Mask = short.Mask[1:]
	half := scripted(0, 1, 1, toolTrajectory)
	half.Mask[0] = 0.5
	for _, tc := range []struct {
		name  string
		recs  []Record
		extra string // written in place of the second line's opening brace
		want  string
	}{
		{"mask shorter than the ids", []Record{good, short}, "{", `:2: field "mask": 21 entries for 22 response ids`},
		{"mask not 0 or 1", []Record{good, half}, "{", `:2: field "mask": entries must be 0 or 1`},
		{"repeated sample", []Record{good, good}, "{", `:2: field "sample_index": group 0 sample 0 already on line 1`},
		{"unknown field", []Record{good, good}, `{"weights":[],`, `:2: field "weights": unknown field`},
		{"missing field", []Record{good, good}, `{"version":1}` + "\n{", `:2: field "step": missing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "step-000003.jsonl")
			var b strings.Builder
			for i, r := range tc.recs {
				var line strings.Builder
				if err := jsonl.WriteLine(&line, r); err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					b.WriteString(tc.extra + line.String()[1:])
				} else {
					b.WriteString(line.String())
				}
			}
			os.WriteFile(path, []byte(b.String()), 0o644)
			_, err := ReadFile(path)
			if err == nil || !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("ReadFile error %v, want it to contain %q", err, path+tc.want)
			}
		})
	}
}

func TestWriteFileRefusesABadRecordAndLeavesNoFile(t *testing.T) {
	bad := scripted(0, 0, 1, toolTrajectory)
	bad.Tokens = bad.Tokens[:3]
	path := Path(t.TempDir(), 0)
	if err := WriteFile(path, []Record{bad}); err == nil || !strings.Contains(err.Error(), `record 0: field "tokens"`) {
		t.Errorf("WriteFile error %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was left: %v", err)
	}
}

func TestLoadListsTheRecordedSteps(t *testing.T) {
	run := t.TempDir()
	if _, err := Load(run, 5); !errors.Is(err, ErrNotRecorded) || !strings.Contains(err.Error(), "no recorded rollouts") {
		t.Errorf("empty run: %v", err)
	}
	for _, step := range []int{10, 0} {
		if err := WriteFile(Path(run, step), []Record{scripted(0, 0, 1, toolTrajectory)}); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(Dir(run), "notes.txt"), nil, 0o644)
	_, err := Load(run, 5)
	if !errors.Is(err, ErrNotRecorded) || !strings.HasSuffix(err.Error(), "step 5: step not recorded; recorded steps: 0, 10") {
		t.Errorf("Load(5): %v", err)
	}
}

func TestSummarizeByHand(t *testing.T) {
	a := scripted(0, 0, 1.5, toolTrajectory)
	b := scripted(0, 1, -0.5, toolTrajectory)
	b.Correct, b.Reward = false, 0
	c := scripted(1, 0, 0, toolTrajectory)
	c.TrainStep, c.Mask = 0, make([]float32, len(c.Mask)) // left out of the loss
	got := Summarize([]Record{a, b, c})
	// the script: 5 + 3 = 8 sampled tokens and 14 injected, 22 in all, per sample
	want := Summary{Step: 3, Samples: 3, Trained: 2, Correct: 1, RewardMean: 2.0 / 3, Tokens: 66, Mask1: 16, Mask0: 50,
		ToolCalls: 3, AdvMin: -0.5, AdvMax: 1.5, ZeroAdvSeqs: 0}
	if got != want {
		t.Errorf("Summarize =\n%+v\nwant\n%+v", got, want)
	}
	if pair := Contrast([]Record{c, b, a}); len(pair) != 2 || pair[0].SampleIndex != 0 || pair[1].SampleIndex != 1 || pair[0].Group != 0 {
		t.Errorf("Contrast = %+v", pair)
	}
}
