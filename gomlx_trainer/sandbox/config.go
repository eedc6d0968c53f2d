package sandbox

import (
	"cmp"
	"fmt"
	"time"
)

// Config sets the interpreter, the limits and the number of workers of a Pool.
// Zero fields take the values of Default. CPUSeconds ends a program at the same
// point of its work however busy the machine is, Timeout does not: for results
// that do not depend on the machine's load, make Timeout a backstop well above
// CPUSeconds, for programs that wait (as the trainer does, see grpo's tool_timeout).
type Config struct {
	Interpreter string        `json:"interpreter"`  // Python executable; "" = python3 on PATH
	Isolation   Level         `json:"isolation"`    // "" = strongest available; otherwise exactly this level
	Workers     int           `json:"workers"`      // programs running at once; Run waits for a free worker
	Timeout     time.Duration `json:"timeout"`      // wall clock per program; then the whole program is killed
	CPUSeconds  int           `json:"cpu_seconds"`  // RLIMIT_CPU: CPU time over all threads, then SIGKILL
	Memory      int64         `json:"memory"`       // RLIMIT_AS: address space in bytes (Python raises MemoryError)
	FileSize    int64         `json:"file_size"`    // RLIMIT_FSIZE: largest file the program may write, in bytes
	Disk        int64         `json:"disk"`         // namespaces level: size of each private tmpfs (working folder, /tmp, /dev/shm)
	Processes   int           `json:"processes"`    // RLIMIT_NPROC: processes and threads of the sandbox user
	OpenFiles   int           `json:"open_files"`   // RLIMIT_NOFILE: open file descriptors per process
	MaxOutput   int           `json:"max_output"`   // bytes kept of stdout and of stderr, each (head and tail)
	MaxResponse int           `json:"max_response"` // characters of ToolResponse (head and tail)
	UIDBase     int           `json:"uid_base"`     // first of Workers dedicated uids (root only); 0 = a random block
}

// Default returns the limits used when a Config field is zero: a 10 s wall clock,
// 10 CPU seconds, 1 GiB of address space, 16 MiB files, 64 MiB per private tmpfs,
// 32 processes, 64 open files, 64 KiB kept per stream, 4000 characters of tool
// response and 4 workers.
func Default() Config {
	return Config{
		Workers:     4,
		Timeout:     10 * time.Second,
		CPUSeconds:  10,
		Memory:      1 << 30,
		FileSize:    16 << 20,
		Disk:        64 << 20,
		Processes:   32,
		OpenFiles:   64,
		MaxOutput:   64 << 10,
		MaxResponse: 4000,
	}
}

// withDefaults returns c with every zero field taken from Default.
func (c Config) withDefaults() Config {
	d := Default()
	c.Workers = cmp.Or(c.Workers, d.Workers)
	c.Timeout = cmp.Or(c.Timeout, d.Timeout)
	c.CPUSeconds = cmp.Or(c.CPUSeconds, d.CPUSeconds)
	c.Memory = cmp.Or(c.Memory, d.Memory)
	c.FileSize = cmp.Or(c.FileSize, d.FileSize)
	c.Disk = cmp.Or(c.Disk, d.Disk)
	c.Processes = cmp.Or(c.Processes, d.Processes)
	c.OpenFiles = cmp.Or(c.OpenFiles, d.OpenFiles)
	c.MaxOutput = cmp.Or(c.MaxOutput, d.MaxOutput)
	c.MaxResponse = cmp.Or(c.MaxResponse, d.MaxResponse)
	return c
}

// Validate reports the first field that is out of range.
func (c Config) Validate() error {
	switch {
	case c.Workers < 0 || c.Workers > maxWorkers:
		return fmt.Errorf("sandbox: workers = %d, want 1..%d", c.Workers, maxWorkers)
	case c.Timeout < 0:
		return fmt.Errorf("sandbox: timeout = %v, want > 0", c.Timeout)
	case c.CPUSeconds < 0:
		return fmt.Errorf("sandbox: cpu_seconds = %d, want > 0", c.CPUSeconds)
	case c.Memory < 0 || (c.Memory > 0 && c.Memory < 16<<20):
		return fmt.Errorf("sandbox: memory = %d bytes, want at least 16 MiB", c.Memory)
	case c.FileSize < 0:
		return fmt.Errorf("sandbox: file_size = %d, want > 0", c.FileSize)
	case c.Disk < 0:
		return fmt.Errorf("sandbox: disk = %d, want > 0", c.Disk)
	case c.Processes < 0:
		return fmt.Errorf("sandbox: processes = %d, want > 0", c.Processes)
	case c.OpenFiles < 0 || (c.OpenFiles > 0 && c.OpenFiles < 8):
		return fmt.Errorf("sandbox: open_files = %d, want at least 8", c.OpenFiles)
	case c.MaxOutput < 0 || (c.MaxOutput > 0 && c.MaxOutput < 64):
		return fmt.Errorf("sandbox: max_output = %d, want at least 64", c.MaxOutput)
	case c.MaxResponse < 0 || (c.MaxResponse > 0 && c.MaxResponse < 64):
		return fmt.Errorf("sandbox: max_response = %d, want at least 64", c.MaxResponse)
	case c.UIDBase < 0 || c.UIDBase > maxUID-maxWorkers:
		return fmt.Errorf("sandbox: uid_base = %d, want 0..%d", c.UIDBase, maxUID-maxWorkers)
	}
	switch c.Isolation {
	case "", LevelNamespaces, LevelUID, LevelRlimits:
	default:
		return fmt.Errorf("sandbox: isolation = %q, want %q, %q, %q or empty", c.Isolation, LevelNamespaces, LevelUID, LevelRlimits)
	}
	return nil
}

const (
	maxWorkers = 1024
	maxUID     = 1<<31 - 2
)
