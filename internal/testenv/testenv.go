package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Strict reports whether missing references must fail tests instead of skipping them.
func Strict() bool {
	return os.Getenv("CI") != "" || os.Getenv("MATHRL_REQUIRE_REFS") == "1"
}

// Missing skips (or, under Strict, fails) the test because what is not available.
func Missing(t testing.TB, what string) {
	t.Helper()
	if Strict() {
		t.Fatalf("reference missing: %s (run scripts/setup.sh, see README)", what)
	}
	t.Skipf("reference missing: %s (run scripts/setup.sh, see README)", what)
}

// RepoRoot returns the module's root folder (the one holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot locate source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Cache returns the folder scripts/setup.sh fills: MATHRL_TEST_CACHE, else .cache/testdeps in the repo.
func Cache(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("MATHRL_TEST_CACHE"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(t), ".cache", "testdeps")
}

// CacheFile returns a file or folder under Cache, or calls Missing.
func CacheFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Cache(t), rel)
	if _, err := os.Stat(p); err != nil {
		Missing(t, p)
	}
	return p
}

// QwenTokenizer returns the real Qwen3 tokenizer.json fetched by scripts/setup.sh.
func QwenTokenizer(t testing.TB) string {
	t.Helper()
	return CacheFile(t, filepath.Join("qwen3", "tokenizer.json"))
}

// NodeModules returns the node_modules folder with tokenizers and @huggingface/jinja.
func NodeModules(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		Missing(t, "node on PATH")
	}
	return CacheFile(t, filepath.Join("npm", "node_modules"))
}

// DataDir returns the folder with the pulled datasets (MATHRL_DATA_DIR), checking that file exists in it.
func DataDir(t testing.TB, file string) string {
	t.Helper()
	d := os.Getenv("MATHRL_DATA_DIR")
	if d == "" {
		Missing(t, "MATHRL_DATA_DIR (datasets pulled by `mathrl data pull`)")
	}
	if _, err := os.Stat(filepath.Join(d, file)); err != nil {
		Missing(t, filepath.Join(d, file))
	}
	return d
}

// Model returns a reference checkpoint folder under MATHRL_TEST_MODELS, e.g. Model(t, "tiny-qwen3-hf").
func Model(t testing.TB, name string) string {
	t.Helper()
	d := os.Getenv("MATHRL_TEST_MODELS")
	if d == "" {
		Missing(t, "MATHRL_TEST_MODELS (folder of reference checkpoints)")
	}
	p := filepath.Join(d, name)
	if _, err := os.Stat(p); err != nil {
		Missing(t, p)
	}
	return p
}

// DebianPython returns Debian's python3 (the one with python3-sympy, python3-pylatexenc and
// python3-jinja2), checking that it can import every module named.
func DebianPython(t testing.TB, modules ...string) string {
	t.Helper()
	py := "/usr/bin/python3"
	if p := os.Getenv("MATHRL_REF_PYTHON"); p != "" {
		py = p
	}
	for _, m := range modules {
		if err := exec.Command(py, "-c", "import "+m).Run(); err != nil {
			Missing(t, py+" with module "+m)
		}
	}
	return py
}

// RefPython returns the python of the references' venv (scripts/python-refs.txt:
// torch, transformers, safetensors, math-verify), checking that it can import
// every module named.
func RefPython(t testing.TB, modules ...string) string {
	t.Helper()
	py := filepath.Join(Cache(t), "venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		Missing(t, py)
	}
	for _, m := range modules {
		if out, err := exec.Command(py, "-c", "import "+m).CombinedOutput(); err != nil {
			Missing(t, py+" with module "+m+": "+string(out))
		}
	}
	return py
}
