package backend

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// CompileStats are a number of graphs built and compiled and the seconds that
// took, summed over the graphs (graphs compiled concurrently count each their
// own time).
type CompileStats struct {
	Graphs  int
	Seconds float64
}

// Add is s and o together.
func (s CompileStats) Add(o CompileStats) CompileStats {
	return CompileStats{Graphs: s.Graphs + o.Graphs, Seconds: s.Seconds + o.Seconds}
}

// Sub is what s holds past o, o being an earlier reading of the same count.
func (s CompileStats) Sub(o CompileStats) CompileStats {
	return CompileStats{Graphs: s.Graphs - o.Graphs, Seconds: s.Seconds - o.Seconds}
}

// Compiles counts the graphs compiled on the backends it watches, in all
// and apart for each Go package whose code asked for them. GoMLX builds and
// compiles a graph the first time an executor runs with new input shapes (a
// new batch size, sequence length or cache length) and reuses it after that,
// so the count says when a program compiles again. A graph's time runs from
// the backend's builder being made to its Compile returning: the Go code that
// builds the graph and the backend's compiler (XLA, or the pure Go backend's
// much cheaper preparation). A graph counts for every package with a function
// on the stack of the goroutine that built it: the package that ran the
// executor, and those that called it. It is safe for concurrent use.
type Compiles struct {
	mu    sync.Mutex
	total CompileStats
	byPkg map[string]CompileStats
}

// NewCompiles returns a count at zero.
func NewCompiles() *Compiles {
	return &Compiles{byPkg: map[string]CompileStats{}}
}

// Watch returns b with its compiles counted in c. It computes what b
// computes, but its tensors are its own: GoMLX refuses to use a tensor of
// one backend value on another, so a program uses the returned backend
// everywhere in place of b. Watching b twice with c gives equal backends.
func (c *Compiles) Watch(b compute.Backend) compute.Backend {
	return watched{Backend: b, c: c}
}

// By is what has been compiled so far of the graphs that package pkg's code
// asked for (pkg is an import path, as "github.com/mathrl/mathrl/gomlx_trainer/sampler").
func (c *Compiles) By(pkg string) CompileStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPkg[pkg]
}

// Split is By(pkg) and what the rest of the code asked for (Total less
// By(pkg)), read at one moment.
func (c *Compiles) Split(pkg string) (by, rest CompileStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPkg[pkg], c.total.Sub(c.byPkg[pkg])
}

// Total is what has been compiled so far.
func (c *Compiles) Total() CompileStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// add counts one graph, compiled in d, asked for by the code of pkgs.
func (c *Compiles) add(pkgs []string, d time.Duration) {
	one := CompileStats{Graphs: 1, Seconds: d.Seconds()}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total = c.total.Add(one)
	for _, p := range pkgs {
		c.byPkg[p] = c.byPkg[p].Add(one)
	}
}

// stackPackages lists once each package with a function on the calling
// goroutine's stack (up to maxStack frames), callers included.
func stackPackages() []string {
	pcs := make([]uintptr, maxStack)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var pkgs []string
	for {
		f, more := frames.Next()
		if p := funcPackage(f.Function); p != "" && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
		if !more {
			return pkgs
		}
	}
}

// maxStack is the most frames stackPackages reads, innermost first: room for
// GoMLX's frames between an executor's call and its builder and for many
// callers above.
const maxStack = 256

// funcPackage is the import path of the package of the function the Go
// runtime names fn ("github.com/mathrl/mathrl/gomlx_trainer/sampler.(*Session).Step",
// a dot in the path's last element written %2e), or "" when fn names none.
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/') + 1
	dot := strings.IndexByte(fn[slash:], '.')
	if dot < 0 {
		return ""
	}
	return fn[:slash] + strings.ReplaceAll(fn[slash:slash+dot], "%2e", ".")
}

// watched is b with its compiles counted in c. Its buffers and executables
// are b's, wrapped so that each buffer names the watched backend as its own
// (GoMLX keeps a tensor to the backend its buffer names); the backend's own
// calls get its own buffers back.
type watched struct {
	compute.Backend
	c *Compiles
}

func (w watched) Builder(name string) compute.Builder {
	start := time.Now()
	return &timedBuilder{Builder: w.Backend.Builder(name), w: w, pkgs: stackPackages(), start: start}
}

func (w watched) BufferFromFlatData(deviceNum compute.DeviceNum, flat any, shape shapes.Shape) (compute.Buffer, error) {
	buf, err := w.Backend.BufferFromFlatData(deviceNum, flat, shape)
	return w.wrap(buf), err
}

func (w watched) NewSharedBuffer(deviceNum compute.DeviceNum, shape shapes.Shape) (compute.Buffer, any, error) {
	buf, flat, err := w.Backend.NewSharedBuffer(deviceNum, shape)
	return w.wrap(buf), flat, err
}

// wrap is buf as a buffer of w (nil stays nil).
func (w watched) wrap(buf compute.Buffer) compute.Buffer {
	if buf == nil {
		return nil
	}
	return watchedBuffer{Buffer: buf, w: w}
}

// watchedBuffer is a buffer of the backend w watches, handed out by w.
type watchedBuffer struct {
	compute.Buffer
	w watched
}

func (b watchedBuffer) Backend() compute.Backend { return b.w }

func (b watchedBuffer) CopyToDevice(deviceNum compute.DeviceNum) (compute.Buffer, error) {
	buf, err := b.Buffer.CopyToDevice(deviceNum)
	return b.w.wrap(buf), err
}

// unwrap is buf as the watched backend's own buffer.
func unwrap(buf compute.Buffer) compute.Buffer {
	if wb, ok := buf.(watchedBuffer); ok {
		return wb.Buffer
	}
	return buf
}

// timedBuilder is a builder of w that counts its graph when it compiles.
type timedBuilder struct {
	compute.Builder
	w     watched
	pkgs  []string  // the packages whose code asked for the graph
	start time.Time // when the builder was made, before the graph was built
}

func (b *timedBuilder) Compile() (compute.Executable, error) {
	exe, err := b.Builder.Compile()
	if err != nil {
		return nil, err
	}
	b.w.c.add(b.pkgs, time.Since(b.start))
	return watchedExecutable{Executable: exe, w: b.w}, nil
}

// watchedExecutable runs an executable of the backend w watches on w's buffers.
type watchedExecutable struct {
	compute.Executable
	w watched
}

func (e watchedExecutable) Execute(inputs []compute.Buffer, donate []bool, defaultDevice compute.DeviceNum) ([]compute.Buffer, error) {
	own := make([]compute.Buffer, len(inputs))
	for i, in := range inputs {
		own[i] = unwrap(in)
	}
	outs, err := e.Executable.Execute(own, donate, defaultDevice)
	for i, out := range outs {
		outs[i] = e.w.wrap(out)
	}
	return outs, err
}
