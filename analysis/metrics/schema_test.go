package metrics

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

func goodSample() Sample {
	return Sample{ProblemID: "aime24-1", SampleIndex: 3, Response: "so \\boxed{204}", ResponseTokens: 812,
		Finish: FinishStop, ToolCalls: 2, Score: 1, Scorer: "math", Budget: 16384, Model: "qwen3-8b", Seed: 7}
}

func TestSamplesRoundTrip(t *testing.T) {
	a, b := goodSample(), goodSample()
	b.SampleIndex, b.Finish, b.Score, b.ResponseTokens, b.Label = 4, FinishLength, 0, 16384, "204"
	var buf bytes.Buffer
	if err := WriteSamples(&buf, a, b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"problem_id":"aime24-1"`) || !strings.Contains(buf.String(), `"response_tokens":812`) {
		t.Errorf("json tags are not snake_case: %s", buf.String())
	}
	got, err := ReadSamples(&buf, "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	a.Version, b.Version = SamplesVersion, SamplesVersion
	if want := []Sample{a, b}; !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestReadSamplesErrors(t *testing.T) {
	ok := `{"version":1,"problem_id":"p","sample_index":0,"response":"r","response_tokens":5,"finish":"stop","tool_calls":0,"score":1,"scorer":"math","budget":10,"model":"m","seed":1}`
	for _, tc := range []struct {
		name, line2, field string
	}{
		{"missing field", strings.Replace(ok, `"score":1,`, ``, 1), "score"},
		{"null field", strings.Replace(ok, `"score":1`, `"score":null`, 1), "score"},
		{"wrong type", strings.Replace(ok, `"response_tokens":5`, `"response_tokens":"5"`, 1), "response_tokens"},
		{"unknown field", strings.Replace(ok, `"seed":1`, `"seed":1,"scroe":1`, 1), "scroe"},
		{"bad finish", strings.Replace(ok, `"stop"`, `"eos"`, 1), "finish"},
		{"other version", strings.Replace(ok, `"version":1`, `"version":2`, 1), "version"},
		{"over budget", strings.Replace(ok, `"response_tokens":5`, `"response_tokens":11`, 1), "response_tokens"},
		{"zero budget", strings.Replace(ok, `"budget":10`, `"budget":0`, 1), "budget"},
		{"empty id", strings.Replace(ok, `"problem_id":"p"`, `"problem_id":""`, 1), "problem_id"},
		{"duplicate", ok, "sample_index"},
		{"error with score", strings.Replace(ok, `"seed":1`, `"seed":1,"error":"label not numeric"`, 1), "score"},
		{"not an object", `[1,2]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSamples(strings.NewReader(ok+"\n"+tc.line2+"\n"), "s.jsonl")
			var je *jsonl.Error
			if !errors.As(err, &je) {
				t.Fatalf("err = %v, want a *jsonl.Error", err)
			}
			if je.Name != "s.jsonl" || je.Line != 2 || je.Field != tc.field {
				t.Errorf("error at %s:%d field %q, want s.jsonl:2 field %q (%v)", je.Name, je.Line, je.Field, tc.field, err)
			}
			if !strings.HasPrefix(err.Error(), "metrics: s.jsonl:2:") {
				t.Errorf("message %q does not start with metrics: s.jsonl:2:", err)
			}
		})
	}
}

func TestWriteSamplesRefusesInvalid(t *testing.T) {
	bad := goodSample()
	bad.Finish = "eos"
	var buf bytes.Buffer
	if err := WriteSamples(&buf, goodSample(), bad); err == nil || !strings.Contains(err.Error(), "sample 1") {
		t.Errorf("err = %v, want an error naming sample 1", err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Errorf("wrote %d lines before the bad sample, want 1", n)
	}
}

func goodStep(step int) StepMetrics {
	return StepMetrics{Step: step, Samples: 1024, RewardMean: 0.1, RewardStd: 0.9, Accuracy: 0.55,
		ResponseLenMean: 3000, ResponseLenMax: 8192, TruncationRate: 0.05, ToolCallsPerSample: 1.5,
		ToolErrorRate: 0.1, Loss: -0.01, ClipFraction: 0.002, Entropy: 0.4, GradNorm: 0.3, LR: 1e-6,
		RolloutSeconds: 300, ToolSeconds: 20, ScoreSeconds: 1, TrainSeconds: 60, TokensPerSecond: 9000}
}

func TestStepMetricsRoundTrip(t *testing.T) {
	kl, rollSec, rollN, trainSec, trainN := 0.001, 12.5, 1.5, 3.0, 0.0
	a, b := goodStep(1), goodStep(2)
	b.KL, b.Extra = &kl, map[string]float64{"dropped_groups": 3}
	b.RolloutCompileSeconds, b.RolloutCompiles, b.TrainCompileSeconds, b.TrainCompiles = &rollSec, &rollN, &trainSec, &trainN
	var buf bytes.Buffer
	if err := WriteStepMetrics(&buf, a, b); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), `"kl"`) != 1 || !strings.Contains(buf.String(), `"tool_calls_per_sample":1.5`) {
		t.Errorf("unexpected encoding: %s", buf.String())
	}
	// unknown compile times are absent, a known 0 is written
	if first, _, _ := strings.Cut(buf.String(), "\n"); strings.Contains(first, "compile") {
		t.Errorf("a line without compile times writes compile fields: %s", first)
	}
	if !strings.Contains(buf.String(), `"rollout_compile_seconds":12.5,"rollout_compiles":1.5,"train_compile_seconds":3,"train_compiles":0`) {
		t.Errorf("compile fields not as written: %s", buf.String())
	}
	got, err := ReadStepMetrics(&buf, "train.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	a.Version, b.Version = StepMetricsVersion, StepMetricsVersion
	if want := []StepMetrics{a, b}; !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

// TestStepMetricsBeforeCompileFields reads a line written before the compile
// fields: they are unknown (nil), not 0.
func TestStepMetricsBeforeCompileFields(t *testing.T) {
	old := `{"version":1,"step":3,"samples":4,"reward_mean":0,"reward_std":0,"accuracy":0,"response_len_mean":1,"response_len_max":1,"truncation_rate":0,"tool_calls_per_sample":0,"tool_error_rate":0,"loss":0,"clip_fraction":0,"entropy":0,"grad_norm":0,"lr":0,"rollout_seconds":2,"tool_seconds":0,"score_seconds":0,"train_seconds":1,"tokens_per_second":0}`
	steps, err := ReadStepMetrics(strings.NewReader(old+"\n"), "train.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	m := steps[0]
	if m.RolloutCompileSeconds != nil || m.RolloutCompiles != nil || m.TrainCompileSeconds != nil || m.TrainCompiles != nil {
		t.Errorf("compile fields of a line without them: %v %v %v %v, want nil", m.RolloutCompileSeconds, m.RolloutCompiles, m.TrainCompileSeconds, m.TrainCompiles)
	}
}

// TestStepMetricsCompileFieldsChecked sets each compile field alone to a
// value out of range: Validate must name that field, and take 0 and a
// fraction of a graph.
func TestStepMetricsCompileFieldsChecked(t *testing.T) {
	for _, f := range []struct {
		name string
		ptr  func(m *StepMetrics) **float64
	}{
		{"rollout_compile_seconds", func(m *StepMetrics) **float64 { return &m.RolloutCompileSeconds }},
		{"rollout_compiles", func(m *StepMetrics) **float64 { return &m.RolloutCompiles }},
		{"train_compile_seconds", func(m *StepMetrics) **float64 { return &m.TrainCompileSeconds }},
		{"train_compiles", func(m *StepMetrics) **float64 { return &m.TrainCompiles }},
	} {
		for _, v := range []float64{-1, math.NaN(), math.Inf(1), 0, 2.5} {
			m := goodStep(1)
			m.Version = StepMetricsVersion
			*f.ptr(&m) = &v
			err := m.Validate()
			var fe *jsonl.FieldError
			if ok := v >= 0 && !math.IsInf(v, 0); ok && err != nil {
				t.Errorf("%s %g: %v, want it valid", f.name, v, err)
			} else if !ok && (!errors.As(err, &fe) || fe.Field != f.name) {
				t.Errorf("%s %g: error %v, want one naming %s", f.name, v, err, f.name)
			}
		}
	}
}

func TestReadStepMetricsErrors(t *testing.T) {
	var first bytes.Buffer
	if err := WriteStepMetrics(&first, goodStep(5)); err != nil {
		t.Fatal(err)
	}
	line := func(mod func(*StepMetrics)) string {
		m := goodStep(6)
		m.Version = StepMetricsVersion
		mod(&m)
		var b bytes.Buffer
		if err := jsonl.WriteLine(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, line2, field string
	}{
		{"repeated step", line(func(m *StepMetrics) { m.Step = 5 }), "step"},
		{"accuracy above 1", line(func(m *StepMetrics) { m.Accuracy = 1.5 }), "accuracy"},
		{"negative seconds", line(func(m *StepMetrics) { m.TrainSeconds = -1 }), "train_seconds"},
		{"negative compiles", line(func(m *StepMetrics) { n := -1.0; m.TrainCompiles = &n }), "train_compiles"},
		{"negative compile time", line(func(m *StepMetrics) { s := -0.5; m.RolloutCompileSeconds = &s }), "rollout_compile_seconds"},
		{"mean above max", line(func(m *StepMetrics) { m.ResponseLenMean = 9000 }), "response_len_mean"},
		{"missing field", strings.Replace(line(func(*StepMetrics) {}), `"grad_norm":0.3,`, "", 1), "grad_norm"},
		{"unknown field", strings.Replace(line(func(*StepMetrics) {}), `"lr":`, `"learning_rate":1,"lr":`, 1), "learning_rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadStepMetrics(strings.NewReader(first.String()+tc.line2), "train.jsonl")
			var je *jsonl.Error
			if !errors.As(err, &je) {
				t.Fatalf("err = %v, want a *jsonl.Error", err)
			}
			if je.Line != 2 || je.Field != tc.field {
				t.Errorf("error at line %d field %q, want line 2 field %q (%v)", je.Line, je.Field, tc.field, err)
			}
		})
	}
}
