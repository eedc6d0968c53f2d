package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// soakEnv sets how long TestSoak submits programs (a Go duration such as
// 5m); the default keeps the test suite quick.
const soakEnv = "MATHRL_SANDBOX_SOAK"

const (
	soakDefault = 10 * time.Second
	soakCallers = 32 // concurrent callers, one worker each
	soakSeed    = 1  // caller i draws its programs from PCG(soakSeed, i)
	// A hostile call's deadline is drawn between these, so that programs are
	// killed at every stage, from the sandbox's setup to the middle of their
	// attack; honest calls run under the pool's timeout.
	hostileMinLimit = 1 * time.Second
	hostileMaxLimit = 15 * time.Second
	// hangSlack is how far past its time limit a call may return: far more
	// than killing and reaping take on a loaded machine, so only a hang exceeds it.
	hangSlack = 30 * time.Second
)

// TestSoak has 32 callers submit a seeded random mix of hostile programs
// (fork bombs, memory hogs, endless loops and output, tmpfs fillers,
// processes that try to outlive the call, stopped processes, threads) and
// honest ones whose output is known, through one pool of 32 workers, for
// MATHRL_SANDBOX_SOAK (default 10 s). Every call must return a result (the
// sandbox never fails), every honest program its exact output, every hostile
// one the verdict of its limits, and no call may take longer than its time
// limit plus hangSlack. After Close nothing of the pool may be left: no
// process, no cgroup, no mount, no temporary folder. The log has the
// per-kind outcomes and the latency (submission to result) distribution.
//
// It runs alone (not in parallel), so that what appears meanwhile is the
// pool's; and only at the namespaces level, where the hostile programs cannot
// harm the machine.
func TestSoak(t *testing.T) {
	d := soakDefault
	if v := os.Getenv(soakEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive duration such as 5m", soakEnv, v)
		}
	}
	cfg := small()
	cfg.Workers = soakCallers
	cfg.Timeout = 2 * time.Minute // the honest programs' limit: ample on a busy machine
	cfg.Processes = 8             // a fork bomb burns Processes x CPUSeconds of CPU
	before := machineNow()
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Isolation().Mounts {
		p.Close()
		t.Skipf("the soak runs hostile programs only at the namespaces level; this machine offers %s", p.Isolation())
	}
	inProcess := processNow()
	marker := "soak-" + uniqueMarker()
	calls := soak(p, d, soakKinds(cfg, marker), marker)
	p.Close()

	failures := 0
	for _, c := range calls {
		if c.problem != "" {
			if failures++; failures <= 20 {
				t.Errorf("%s: %s", c.kind, c.problem)
			}
		}
		if c.latency > c.limit+hangSlack {
			t.Errorf("%s: returned after %v, past its limit of %v plus %v", c.kind, c.latency, c.limit, hangSlack)
		}
	}
	if failures > 20 {
		t.Errorf("... %d failed calls in all", failures)
	}
	left := leftovers(before, inProcess, uidsOf(calls), marker)
	for _, l := range left {
		t.Errorf("left behind: %s", l)
	}
	t.Logf("soak: %d callers for %v at %s, seed %d: %d programs, %d leftovers\n%s",
		soakCallers, d, p.Isolation().Level, soakSeed, len(calls), len(left), soakTable(calls))
}

// soakKind is one kind of program the soak submits.
type soakKind struct {
	name   string
	honest bool // its output must be right, within the pool's timeout
	// program returns the code to run and its check, which returns nil when
	// the result is what the program must get.
	program func(rng *rand.Rand) (code string, check func(sandbox.Result) error)
}

// soakCall is what one call gave.
type soakCall struct {
	kind, outcome  string
	honest         bool
	uid            int
	latency, limit time.Duration
	problem        string // why the call failed the test; "" if it did not
}

// soak runs the callers for d, each calling until d has passed, and returns
// every call. Each program carries marker in a comment, so that a temporary
// folder left behind can be told apart from other pools'.
func soak(p *sandbox.Pool, d time.Duration, kinds []soakKind, marker string) []soakCall {
	var honest, hostile []soakKind
	for _, k := range kinds {
		if k.honest {
			honest = append(honest, k)
		} else {
			hostile = append(hostile, k)
		}
	}
	end := time.Now().Add(d)
	var mu sync.Mutex
	var calls []soakCall
	var wg sync.WaitGroup
	for i := range soakCallers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(soakSeed, uint64(i)))
			for time.Now().Before(end) {
				k := hostile[rng.IntN(len(hostile))]
				if rng.IntN(3) == 0 { // a third honest
					k = honest[rng.IntN(len(honest))]
				}
				c := soakOne(p, k, rng, marker)
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return calls
}

// soakOne runs one program of kind k: a hostile one under a deadline drawn
// between hostileMinLimit and hostileMaxLimit, an honest one under the pool's
// timeout.
func soakOne(p *sandbox.Pool, k soakKind, rng *rand.Rand, marker string) soakCall {
	code, check := k.program(rng)
	ctx, limit := context.Background(), p.Config().Timeout
	if !k.honest {
		limit = hostileMinLimit + time.Duration(rng.Int64N(int64(hostileMaxLimit-hostileMinLimit)))
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	start := time.Now()
	r, err := p.Run(ctx, code+"\n# "+marker+"\n")
	c := soakCall{kind: k.name, honest: k.honest, uid: r.UID, latency: time.Since(start), limit: limit, outcome: outcome(r)}
	switch {
	case err != nil:
		c.outcome, c.problem = "error", fmt.Sprintf("the sandbox failed: %v", err)
	case !k.honest && r.Limit == "canceled":
		// The call's own time limit ended it: a verdict every hostile program may get.
	default:
		if err := check(r); err != nil {
			c.problem = fmt.Sprintf("%v (exit %d, %s; stdout %.200q, stderr %.200q)", err, r.ExitCode, c.outcome, r.Stdout, r.Stderr)
		}
	}
	return c
}

// outcome names how a program ended: the limit that ended it, the signal
// that killed it, or its exit status.
func outcome(r sandbox.Result) string {
	switch {
	case r.Limit != "":
		return r.Limit
	case r.Killed:
		return r.Signal
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// soakKinds lists the programs of the soak: honest ones with answers computed
// in Go, the hostile suite's programs and attacks, and three more that fill
// the tmpfs folders, leave sleeping children, and play with signals.
func soakKinds(cfg sandbox.Config, marker string) []soakKind {
	fixed := func(name, code string, check func(sandbox.Result) error) soakKind {
		return soakKind{name: name, program: func(*rand.Rand) (string, func(sandbox.Result) error) { return code, check }}
	}
	killed := func(r sandbox.Result) error {
		if !r.Killed {
			return errors.New("not killed")
		}
		return nil
	}
	output := func(stdout string, exit int) func(sandbox.Result) error {
		return func(r sandbox.Result) error {
			if r.Stdout != stdout || r.ExitCode != exit {
				return fmt.Errorf("want stdout %.200q and exit status %d", stdout, exit)
			}
			return nil
		}
	}
	hugeCode, hugeOut, hugeErr := hugeOutput(50000)
	disk := fmt.Sprintf("big %d\nopen True %d\ndisk %d\n", syscall.EFBIG, syscall.EMFILE, syscall.ENOSPC)
	kinds := []soakKind{
		{name: "honest", honest: true, program: func(rng *rand.Rand) (string, func(sandbox.Result) error) {
			code, want := honest(1 + rng.IntN(24))
			return code, func(r sandbox.Result) error {
				if r.Stdout != want || r.ExitCode != 0 || r.Killed || r.Stderr != "" {
					return fmt.Errorf("want stdout %q, exit status 0", want)
				}
				return nil
			}
		}},
		fixed("fork bomb", forkBomb, killed),
		fixed("memory bomb", memoryBomb(cfg.Memory), output("quarter ok\nMemoryError\n", 1)),
		fixed("infinite loop", infiniteLoop, killed),
		fixed("sleep", sleepy, killed),
		fixed("busy threads", busyThreads, killed),
		fixed("huge output", hugeCode, func(r sandbox.Result) error {
			if r.Stdout != headAndTail(hugeOut, cfg.MaxOutput) || r.Stderr != headAndTail(hugeErr, cfg.MaxOutput) || r.ExitCode != 0 {
				return errors.New("want the head and tail of both streams, exit status 0")
			}
			return nil
		}),
		fixed("endless output", endlessOutput, killed),
		fixed("files and disk", filesAndDisk(cfg), output(disk, 0)),
		fixed("fill tmpfs", fillTmpfs(cfg), output(fmt.Sprintf("/tmp %d\n/dev/shm %d\n", syscall.ENOSPC, syscall.ENOSPC), 0)),
		fixed("background", backgroundProcesses(marker), output("started\n", 0)),
		fixed("sleeping children", sleepingChildren, output("parent exits\n", 0)),
		fixed("signal games", signalGames, killed),
	}
	for i, code := range attacks {
		kinds = append(kinds, fixed(fmt.Sprintf("attack %d", i+1), code, func(sandbox.Result) error { return nil }))
	}
	return kinds
}

// fillTmpfs writes files of half cfg.FileSize into /tmp, then /dev/shm, until
// the folder is full or four times cfg.Disk is written, and prints, for each,
// the errno that stopped it or that nothing did.
func fillTmpfs(cfg sandbox.Config) string {
	return fmt.Sprintf(`import os
for d in ["/tmp", "/dev/shm"]:
    try:
        for i in range(%d):
            with open(os.path.join(d, "part%%d" %% i), "wb") as f:
                f.write(b"x" * %d)
        print(d, "unbounded")
    except OSError as e:
        print(d, e.errno)
`, 4*cfg.Disk/cfg.FileSize, cfg.FileSize/2)
}

// sleepingChildren leaves four sleeping children and an orphaned grandchild,
// then exits.
const sleepingChildren = `import os, time
for i in range(4):
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)
if os.fork() == 0:
    if os.fork() == 0:
        time.sleep(300)
    os._exit(0)
print("parent exits", flush=True)
`

// signalGames ignores every signal it may and waits for a child that stops
// itself: only SIGKILL ends it. (The program's own process may be the init of
// a PID namespace, which ignores a SIGSTOP sent from inside; its child does not.)
const signalGames = `import os, signal
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU, signal.SIGUSR1, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(0)
print("waiting", flush=True)
os.waitpid(pid, 0)
`

func uidsOf(calls []soakCall) map[int]bool {
	uids := map[int]bool{}
	for _, c := range calls {
		if c.uid != os.Geteuid() {
			uids[c.uid] = true
		}
	}
	return uids
}

// soakTable is the per-kind summary: calls, time limits, latency (submission
// to result) at the 50th and 99th percentiles and at most, the most a call
// took past its limit, and outcomes.
func soakTable(calls []soakCall) string {
	groups := map[string][]soakCall{}
	var names []string
	for _, c := range calls {
		if groups[c.kind] == nil {
			names = append(names, c.kind)
		}
		groups[c.kind] = append(groups[c.kind], c)
		all := "all hostile"
		if c.honest {
			all = "all honest"
		}
		groups[all] = append(groups[all], c)
		groups["all"] = append(groups["all"], c)
	}
	slices.Sort(names)
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "kind\tcalls\tlimit\tp50\tp99\tmax\tpast limit\toutcomes")
	for _, name := range append(names, "all honest", "all hostile", "all") {
		g := groups[name]
		if len(g) == 0 {
			continue
		}
		lat := make([]time.Duration, len(g))
		counts := map[string]int{}
		lo, hi, past := g[0].limit, g[0].limit, g[0].latency-g[0].limit
		for i, c := range g {
			lat[i] = c.latency
			counts[c.outcome]++
			lo, hi, past = min(lo, c.limit), max(hi, c.limit), max(past, c.latency-c.limit)
		}
		limit := fmt.Sprint(lo.Round(time.Second))
		if hi.Round(time.Second) != lo.Round(time.Second) {
			limit += "-" + fmt.Sprint(hi.Round(time.Second))
		}
		slices.Sort(lat)
		var outs []string
		for o, n := range counts {
			outs = append(outs, fmt.Sprintf("%s %d", o, n))
		}
		slices.Sort(outs)
		fmt.Fprintf(w, "%s\t%d\t%s\t%v\t%v\t%v\t%v\t%s\n", name, len(g), limit, rank(lat, 0.50), rank(lat, 0.99), rank(lat, 1),
			past.Round(10*time.Millisecond), strings.Join(outs, ", "))
	}
	w.Flush()
	return b.String()
}

// rank is the nearest-rank percentile q of sorted durations, rounded to 10 ms.
func rank(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(i, 0)].Round(10 * time.Millisecond)
}
