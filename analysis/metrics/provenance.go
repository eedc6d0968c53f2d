package metrics

// Provenance is a training run's provenance.json: where the run came from.
// The trainer writes it when a run starts; the analysis reads it to say which
// code, backend and scorer produced a result.
type Provenance struct {
	Command   string            `json:"command,omitempty"`    // the command line
	Started   string            `json:"started"`              // RFC 3339, UTC
	GitCommit string            `json:"git_commit"`           // the commit the binary was built from; "unknown" when nothing says
	GitDirty  bool              `json:"git_dirty"`            // uncommitted changes to tracked files
	GitSource string            `json:"git_source,omitempty"` // what named the commit: the binary's stamp, or (fallback) the checkout at run time
	GoVersion string            `json:"go_version"`
	Modules   map[string]string `json:"modules"`              // module path -> version, from the build info
	Backend   string            `json:"backend"`              // GoMLX backend name
	Device    string            `json:"device"`               // backend description
	Kernels   string            `json:"go_kernels,omitempty"` // the Go backend's matrix-product kernels (backend.GoKernels); a Go-backend run repeats bit for bit where they are the same
	Scorer    string            `json:"scorer"`               // rm_type
	Seed      int64             `json:"seed"`                 // cfg.Seed
	Sandbox   string            `json:"sandbox"`              // tool isolation level
	Host      string            `json:"host_cpus"`            // CPUs seen by Go
}
