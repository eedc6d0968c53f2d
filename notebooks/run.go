package notebooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mathrl/mathrl/internal/atomicfile"
)

// Options say which notebooks to run and where to publish them.
type Options struct {
	Dir     string        // folder holding the *.ipynb files
	Out     string        // folder receiving the executed notebooks and their HTML renders
	Only    []string      // run only these notebooks (file names, with or without .ipynb); all when empty
	Jupyter string        // the jupyter command; Debian's /usr/bin/jupyter when empty
	Kernel  string        // kernel name; "gonb" when empty
	Timeout time.Duration // per cell; 10 minutes when zero
	Path    []string      // folders put first on PATH for the kernel (where gonb and goimports are)
	Log     io.Writer     // progress lines; none when nil
}

// Result is one notebook that passed.
type Result struct {
	Name     string        // file name, e.g. "budgets.ipynb"
	Executed string        // published executed notebook
	HTML     string        // published HTML render
	Took     time.Duration // execution time
}

// Run executes every selected notebook headless, checks it (see Check),
// renders it to HTML, and publishes both into opts.Out once all passed. On
// failure the error names each failing notebook and cell, and the executed
// notebooks are left in a scratch folder that the error names.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	if opts.Jupyter == "" {
		opts.Jupyter = "/usr/bin/jupyter"
	}
	if opts.Kernel == "" {
		opts.Kernel = "gonb"
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	names, err := selectNotebooks(opts.Dir, opts.Only)
	if err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp("", "mathrl-notebooks-")
	if err != nil {
		return nil, fmt.Errorf("notebooks: %w", err)
	}
	env := kernelEnv(opts.Path)
	var results []Result
	var errs []error
	for _, name := range names {
		start := time.Now()
		fmt.Fprintf(opts.Log, "notebooks: running %s\n", name)
		if err := execute(ctx, opts, env, name, scratch); err != nil {
			errs = append(errs, err)
			fmt.Fprintf(opts.Log, "notebooks: %s FAILED\n", name)
			continue
		}
		took := time.Since(start)
		fmt.Fprintf(opts.Log, "notebooks: %s passed in %s\n", name, took.Round(time.Second))
		results = append(results, Result{Name: name, Took: took})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w\n(executed notebooks kept in %s)", errors.Join(errs...), scratch)
	}
	for i, r := range results {
		stem := strings.TrimSuffix(r.Name, ".ipynb")
		for _, file := range []string{stem + ".ipynb", stem + ".html"} {
			data, err := os.ReadFile(filepath.Join(scratch, file))
			if err != nil {
				return nil, fmt.Errorf("notebooks: %w", err)
			}
			if err := atomicfile.WriteFile(filepath.Join(opts.Out, file), data); err != nil {
				return nil, fmt.Errorf("notebooks: %w", err)
			}
		}
		results[i].Executed = filepath.Join(opts.Out, stem+".ipynb")
		results[i].HTML = filepath.Join(opts.Out, stem+".html")
	}
	os.RemoveAll(scratch)
	return results, nil
}

// selectNotebooks lists the *.ipynb files of dir, sorted, keeping only those in only.
func selectNotebooks(dir string, only []string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.ipynb"))
	if err != nil {
		return nil, fmt.Errorf("notebooks: %w", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	sort.Strings(names)
	if len(only) > 0 {
		var picked []string
		for _, o := range only {
			want := strings.TrimSuffix(filepath.Base(o), ".ipynb") + ".ipynb"
			found := false
			for _, n := range names {
				if n == want {
					picked, found = append(picked, n), true
				}
			}
			if !found {
				return nil, fmt.Errorf("notebooks: no notebook %s in %s", want, dir)
			}
		}
		names = picked
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("notebooks: no .ipynb files in %s", dir)
	}
	return names, nil
}

// kernelEnv returns the environment with the given folders first on PATH.
func kernelEnv(first []string) []string {
	env := os.Environ()
	if len(first) == 0 {
		return env
	}
	path := strings.Join(append(append([]string{}, first...), os.Getenv("PATH")), string(os.PathListSeparator))
	out := []string{"PATH=" + path}
	for _, e := range env {
		if !strings.HasPrefix(e, "PATH=") {
			out = append(out, e)
		}
	}
	return out
}

// execute runs one notebook into scratch, checks it and renders it to HTML.
func execute(ctx context.Context, opts Options, env []string, name, scratch string) error {
	stem := strings.TrimSuffix(name, ".ipynb")
	args := []string{"nbconvert", "--to", "notebook", "--execute",
		"--ExecutePreprocessor.kernel_name=" + opts.Kernel,
		fmt.Sprintf("--ExecutePreprocessor.timeout=%d", int(opts.Timeout.Seconds())),
		"--ExecutePreprocessor.allow_errors=True",
		"--NotebookClient.record_timing=False",
		"--output-dir", scratch, "--output", stem,
		filepath.Join(opts.Dir, name)}
	if err := jupyter(ctx, opts.Jupyter, env, args); err != nil {
		return fmt.Errorf("notebooks: %s: %w", name, err)
	}
	executed := filepath.Join(scratch, name)
	data, err := os.ReadFile(executed)
	if err != nil {
		return fmt.Errorf("notebooks: %s: %w", name, err)
	}
	if err := Check(name, data); err != nil {
		return err
	}
	if err := jupyter(ctx, opts.Jupyter, env, []string{"nbconvert", "--to", "html", "--output-dir", scratch, executed}); err != nil {
		return fmt.Errorf("notebooks: %s: html: %w", name, err)
	}
	return nil
}

// kernelLog matches the kernel's own log lines (glog format), left out of error messages.
var kernelLog = regexp.MustCompile(`^[IWEF]\d{4} \d\d:\d\d:\d\d`)

// jupyter runs one jupyter command; a failure carries the end of its stderr.
func jupyter(ctx context.Context, bin string, env, args []string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var keep []string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.TrimSpace(l) != "" && !kernelLog.MatchString(l) {
				keep = append(keep, l)
			}
		}
		if len(keep) > 20 {
			keep = keep[len(keep)-20:]
		}
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), args[0], err, strings.Join(keep, "\n"))
	}
	return nil
}
