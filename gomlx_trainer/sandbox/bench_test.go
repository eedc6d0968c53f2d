package sandbox_test

import (
	"context"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// BenchmarkThroughput measures executions per second of a trivial and of a
// numeric (sympy) program: run bare (python3 -c, no sandbox) as the baseline,
// through a pool of 1 worker, and through a pool of one worker per core. Each
// iteration runs the program once in each way; the metrics are the three
// rates and their ratios. Run with a small -benchtime, e.g. -benchtime=10x.
func BenchmarkThroughput(b *testing.B) {
	py := systemPython(b)
	if err := exec.Command(py, "-c", "import sympy").Run(); err != nil {
		b.Skipf("%s cannot import sympy: %v", py, err)
	}
	for _, prog := range []struct{ name, code string }{
		{"trivial", "print(1 + 1)\n"},
		{"sympy", "import sympy\nx = sympy.symbols('x')\nprint(sympy.factor(x**12 - 1), sympy.integrate(sympy.sin(x)**2, x))\n"},
	} {
		b.Run(prog.name, func(b *testing.B) {
			n := runtime.NumCPU()
			one := benchPool(b, py, 1)
			many := benchPool(b, py, n)
			var bare, seq, par time.Duration
			for b.Loop() {
				start := time.Now()
				if out, err := exec.Command(py, "-I", "-c", prog.code).Output(); err != nil || len(out) == 0 {
					b.Fatalf("bare python: %v", err)
				}
				bare += time.Since(start)

				start = time.Now()
				mustRun(b, one, prog.code)
				seq += time.Since(start)

				start = time.Now()
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() { mustRun(b, many, prog.code) })
				}
				wg.Wait()
				par += time.Since(start)
			}
			runs := float64(b.N)
			b.ReportMetric(runs/bare.Seconds(), "bare_execs/s")
			b.ReportMetric(runs/seq.Seconds(), "execs/s@1")
			b.ReportMetric(runs*float64(n)/par.Seconds(), "execs/s@N")
			b.ReportMetric(bare.Seconds()/seq.Seconds(), "sandbox/bare")
			b.ReportMetric((runs*float64(n)/par.Seconds())/(runs/seq.Seconds()), "N/1")
			b.ReportMetric(float64(n), "N")
		})
	}
}

func benchPool(b *testing.B, py string, workers int) *sandbox.Pool {
	b.Helper()
	p, err := sandbox.NewPool(sandbox.Config{Interpreter: py, Workers: workers, Timeout: time.Minute, CPUSeconds: 60})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	return p
}

func mustRun(b *testing.B, p *sandbox.Pool, code string) {
	r, err := p.Run(context.Background(), code)
	if err != nil || r.ExitCode != 0 || r.Stdout == "" {
		b.Errorf("run: %v, exit %d, stderr %q", err, r.ExitCode, r.Stderr)
	}
}
