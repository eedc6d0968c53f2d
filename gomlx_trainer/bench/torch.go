package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// Where the PyTorch baseline's pieces live, relative to the repository root.
const (
	TorchScript = "scripts/bench/torch_qwen3.py"    // the baseline script
	VenvPython  = ".cache/testdeps/venv/bin/python" // the references' venv, installed by scripts/setup.sh
)

// TorchOptions says how to run the PyTorch baseline.
type TorchOptions struct {
	Python     string // interpreter with torch and transformers; "": FindPython
	Script     string // the baseline script; "": FindTorchScript
	Threads    int    // torch.set_num_threads (and OMP_NUM_THREADS); 0: torch's default
	Checkpoint string // checkpoint folder to load instead of a random model of the config
	// MatmulMax > 0 also measures torch's float32 and bfloat16 matmul peaks,
	// as MeasureMatmul does, up to matrices of this side (the script's
	// --matmul-peak).
	MatmulMax int
}

// TorchResult is what the baseline script reports: Result's fields (those it
// measures) and the versions and settings it ran with.
type TorchResult struct {
	Result
	Torch        string `json:"torch"`               // torch.__version__
	Transformers string `json:"transformers"`        // transformers.__version__
	Threads      int    `json:"threads"`             // torch.get_num_threads()
	Attention    string `json:"attn_implementation"` // the model's attention implementation (sdpa, eager)
	DType        string `json:"dtype"`               // float32 or bfloat16
	// Matmuls are torch's matmul peaks (TorchOptions.MatmulMax), On TorchName.
	Matmuls []Matmul `json:"matmuls,omitempty"`
}

// FindPython returns the references' venv python: under MATHRL_TEST_CACHE when
// that is set, else VenvPython under the first folder, from the working
// directory or the executable's up to the root, that has it; "" when none.
func FindPython() string {
	if d := os.Getenv("MATHRL_TEST_CACHE"); d != "" {
		if p := filepath.Join(d, "venv", "bin", "python"); isFile(p) {
			return p
		}
	}
	return findUp(VenvPython)
}

// FindTorchScript returns TorchScript under the first folder, from the working
// directory or the executable's up to the root, that has it; "" when none.
func FindTorchScript() string { return findUp(TorchScript) }

// findUp returns rel under the first folder holding a project cache
// (backend.CacheDirs: the working directory's, the executable's, and those
// above them) that has it; rel is relative to that folder, the repository
// root.
func findUp(rel string) string {
	for _, c := range backend.CacheDirs() {
		if p := filepath.Join(filepath.Dir(c), rel); isFile(p) {
			return p
		}
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// resolve fills Python and Script from discovery and checks that both exist.
func (t TorchOptions) resolve() (TorchOptions, error) {
	if t.Python == "" {
		if t.Python = FindPython(); t.Python == "" {
			return t, fmt.Errorf("bench: torch baseline: no python found at %s (run `bash scripts/setup.sh`, or pass --python)", VenvPython)
		}
	}
	if t.Script == "" {
		if t.Script = FindTorchScript(); t.Script == "" {
			return t, fmt.Errorf("bench: torch baseline: %s not found above the working directory nor the executable (pass --torch-script)", TorchScript)
		}
	}
	for _, f := range []struct{ name, path string }{{"python", t.Python}, {"torch script", t.Script}} {
		if !isFile(f.path) {
			return t, fmt.Errorf("bench: torch baseline: %s %s: not a file", f.name, f.path)
		}
	}
	return t, nil
}

// dtypeName names dtype as torch and Roofline do.
func dtypeName(dtype dtypes.DType) (string, error) {
	switch dtype {
	case dtypes.Float32:
		return "float32", nil
	case dtypes.BFloat16:
		return "bfloat16", nil
	}
	return "", fmt.Errorf("bench: dtype %s not supported (float32 or bfloat16)", dtype)
}

// torchArgs returns the script's command line for the shapes of opts (with its
// defaults filled) and t's threads and matmul size; source is "--config" or
// "--model" and path its file or folder.
func torchArgs(script, source, path, dtype string, opts Options, t TorchOptions) []string {
	what := "both"
	switch {
	case !opts.Decode:
		what = "train"
	case !opts.Train:
		what = "decode"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i := strconv.Itoa
	return []string{script, source, path, "--dtype", dtype, "--what", what,
		"--batch", i(opts.Batch), "--seq-len", i(opts.SeqLen), "--steps", i(max(opts.TrainSteps, 1)),
		"--decode-batch", i(opts.DecodeBatch), "--prompt-len", i(opts.PromptLen), "--new-tokens", i(opts.NewTokens),
		"--temperature", f(opts.Temperature), "--threads", i(t.Threads), "--matmul-peak", i(t.MatmulMax), "--seed", strconv.FormatUint(opts.Seed, 10),
		"--lr", f(opts.LR), "--beta1", f(opts.AdamW.Beta1), "--beta2", f(opts.AdamW.Beta2), "--eps", f(opts.AdamW.Eps),
		"--weight-decay", f(opts.AdamW.WeightDecay), "--clip-norm", f(opts.AdamW.ClipNorm)}
}

// RunTorch runs the PyTorch baseline on the shapes of opts: a random model of
// cfg (written to a temporary config.json) or t.Checkpoint, in dtype, with the
// same AdamW settings. The script's progress lines go to log. The result's
// rates are set (Result.SetRates), its fractions of a roofline are not.
func RunTorch(ctx context.Context, cfg qwen3.Config, dtype dtypes.DType, opts Options, t TorchOptions, log io.Writer) (TorchResult, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return TorchResult{}, err
	}
	t, err := t.resolve()
	if err != nil {
		return TorchResult{}, err
	}
	dt, err := dtypeName(dtype)
	if err != nil {
		return TorchResult{}, err
	}
	source, path := "--model", t.Checkpoint
	if path == "" {
		dir, err := writeHFConfig(cfg)
		if err != nil {
			return TorchResult{}, err
		}
		defer os.RemoveAll(dir)
		source, path = "--config", filepath.Join(dir, "config.json")
	}
	out, err := runScript(ctx, t, torchArgs(t.Script, source, path, dt, opts, t), log)
	if err != nil {
		return TorchResult{}, fmt.Errorf("bench: torch baseline: %w", err)
	}
	r, err := ParseTorch(out, opts)
	if err != nil {
		return r, err
	}
	if t.MatmulMax > 0 && len(r.Matmuls) != 2 {
		return r, fmt.Errorf("bench: torch baseline: %d matmul peaks, want 2 (float32, bfloat16)", len(r.Matmuls))
	}
	r.SetRates(cfg, dtype)
	return r, nil
}

// writeHFConfig writes cfg as config.json in a new temporary folder, which it
// returns.
func writeHFConfig(cfg qwen3.Config) (string, error) {
	data, err := cfg.MarshalHF()
	if err != nil {
		return "", fmt.Errorf("bench: torch baseline: %w", err)
	}
	dir, err := os.MkdirTemp("", "mathrl-bench-torch-")
	if err != nil {
		return "", fmt.Errorf("bench: torch baseline: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("bench: torch baseline: %w", err)
	}
	return dir, nil
}

// ParseTorch reads the baseline script's output (its last non-empty line is
// one JSON object) and checks that every measurement opts asked for is
// positive, naming the first field that is not.
func ParseTorch(out []byte, opts Options) (TorchResult, error) {
	var r TorchResult
	if err := lastJSONLine(out, &r); err != nil {
		return r, fmt.Errorf("bench: torch baseline: %w", err)
	}
	want := []struct {
		name string
		v    float64
		on   bool
	}{
		{"params", float64(r.Params), true}, {"threads", float64(r.Threads), true},
		{"train_step_ms", r.TrainStepMS, opts.Train}, {"train_tokens_per_s", r.TrainTokensPerS, opts.Train},
		{"decode_step_ms", r.DecodeStepMS, opts.Decode}, {"decode_tokens_per_s", r.DecodeTokensPerS, opts.Decode},
		{"prefill_ms", r.PrefillMS, opts.Decode},
	}
	for _, f := range want {
		if f.on && !(f.v > 0) {
			return r, fmt.Errorf("bench: torch baseline: field %q is %g, want > 0", f.name, f.v)
		}
	}
	return r, nil
}

// TorchProducts is what the baseline script reports with --products.
type TorchProducts struct {
	Torch   string    `json:"torch"`       // torch.__version__
	Threads int       `json:"threads"`     // torch.get_num_threads()
	MS      []float64 `json:"products_ms"` // each product's time, in the order given
	// Matmuls are torch's matmul peaks (TorchOptions.MatmulMax), On TorchName.
	Matmuls []Matmul `json:"matmuls,omitempty"`
}

// RunTorchProducts times ps in PyTorch in dtype, each as torch's linear layer
// and its autograd compute it (F.linear, grad.mm(weight), grad.t().mm(input)),
// under MeasureProducts' rules, with t's threads (and, with t.MatmulMax, its
// matmul peaks).
func RunTorchProducts(ctx context.Context, ps []Product, dtype dtypes.DType, t TorchOptions, log io.Writer) (TorchProducts, error) {
	t, err := t.resolve()
	if err != nil {
		return TorchProducts{}, err
	}
	dt, err := dtypeName(dtype)
	if err != nil {
		return TorchProducts{}, err
	}
	data, err := json.Marshal(ps)
	if err != nil {
		return TorchProducts{}, err
	}
	f, err := os.CreateTemp("", "mathrl-bench-products-*.json")
	if err != nil {
		return TorchProducts{}, fmt.Errorf("bench: torch products: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return TorchProducts{}, fmt.Errorf("bench: torch products: %w", err)
	}
	if err := f.Close(); err != nil {
		return TorchProducts{}, fmt.Errorf("bench: torch products: %w", err)
	}
	i := strconv.Itoa
	out, err := runScript(ctx, t, []string{t.Script, "--products", f.Name(), "--dtype", dt,
		"--threads", i(t.Threads), "--matmul-peak", i(t.MatmulMax)}, log)
	if err != nil {
		return TorchProducts{}, fmt.Errorf("bench: torch products: %w", err)
	}
	return ParseTorchProducts(out, len(ps), t.MatmulMax > 0)
}

// ParseTorchProducts reads the script's --products output (its last
// non-empty line is one JSON object) and checks that it timed n products,
// each in a time > 0, and, with peaks, gave both matmul peaks.
func ParseTorchProducts(out []byte, n int, peaks bool) (TorchProducts, error) {
	var r TorchProducts
	if err := lastJSONLine(out, &r); err != nil {
		return r, fmt.Errorf("bench: torch products: %w", err)
	}
	if len(r.MS) != n {
		return r, fmt.Errorf("bench: torch products: field \"products_ms\" has %d times, want %d", len(r.MS), n)
	}
	for k, ms := range r.MS {
		if !(ms > 0) {
			return r, fmt.Errorf("bench: torch products: field \"products_ms\"[%d] is %g, want > 0", k, ms)
		}
	}
	if peaks && len(r.Matmuls) != 2 {
		return r, fmt.Errorf("bench: torch products: %d matmul peaks, want 2 (float32, bfloat16)", len(r.Matmuls))
	}
	return r, nil
}

// runScript runs t.Python with args, with t's threads in OMP_NUM_THREADS and
// MKL_NUM_THREADS, its standard error going to log, and returns its standard
// output.
func runScript(ctx context.Context, t TorchOptions, args []string, log io.Writer) ([]byte, error) {
	cmd := exec.CommandContext(ctx, t.Python, args...)
	cmd.Env = os.Environ()
	if t.Threads > 0 {
		n := strconv.Itoa(t.Threads)
		cmd.Env = append(cmd.Env, "OMP_NUM_THREADS="+n, "MKL_NUM_THREADS="+n)
	}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", t.Python, t.Script, err)
	}
	return stdout.Bytes(), nil
}

// lastJSONLine decodes the last non-empty line of a script's output, one JSON
// object, into v.
func lastJSONLine(out []byte, v any) error {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	last := lines[len(lines)-1]
	if len(last) == 0 {
		return errors.New("printed nothing")
	}
	if err := json.Unmarshal(last, v); err != nil {
		return fmt.Errorf("output %q: %w", last, err)
	}
	return nil
}
