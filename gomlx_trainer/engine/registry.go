package engine

import (
	"fmt"
	"slices"
	"sync"

	"github.com/mathrl/mathrl/internal/english"
)

// Config is what the rollout_engine knobs of a run (or the flags of `mathrl
// eval`) say about the engine. Check and New read it; FieldError.Key names
// the knob a finding concerns.
type Config struct {
	Name       string           // rollout_engine: the Spec that makes the engine
	URLs       []string         // rollout_engine_urls: the servers' base URLs
	Batch      int              // rollout_engine_batch: sequences per request (0: one each)
	WeightsDir string           // weights_dir: where the policy's weights are written for the servers
	Async      bool             // async_rollouts: the engine samples while the policy trains
	Devices    int              // num_devices the policy trains on (0: 1)
	APIKey     string           // rollout_engine_api_key: sent to the servers (empty: $MATHRL_ROLLOUT_API_KEY); never logged
	Warn       func(msg string) // told of each server taken out of the rotation (nil: not told)
}

// Policy is the model an engine samples from.
type Policy struct {
	Vocab int                    // ids in the model's vocabulary
	Save  func(dir string) error // writes the weights as they are now as a Hugging Face folder (servers load it)
	// Checkpoint is a folder that already holds the weights as a Hugging Face
	// folder (the model `mathrl eval` evaluates): servers load it as it is,
	// and Save is not called.
	Checkpoint string
	// Untied gives the folder of a Hugging Face folder's weights with the
	// output head untied, which vLLM servers load (Weights.Untied); nil:
	// they load the folder as it is.
	Untied func(dir string) (string, error)
	// Local is what an in-process engine samples with, of the type its
	// package documents (nil where only servers sample).
	Local any
}

// Spec is one rollout engine: its rollout_engine name, the checks it makes
// of a Config beyond those every engine shares, and its constructor.
type Spec struct {
	Name  string
	Check func(Config) error                   // a *FieldError naming the knob; nil: no further checks
	New   func(Config, Policy) (Engine, error) // called with a Config that passed Check
}

// FieldError is a finding of Check: the knob it concerns and what is wrong.
type FieldError struct {
	Key string // the knob, as a recipe spells it
	Msg string
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Msg }

// badField returns a *FieldError for key.
func badField(key, format string, args ...any) error {
	return &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Spec{}
)

// Register makes an engine available under its name, as database/sql's
// drivers are: each engine's package registers itself when it is imported.
// It panics if the name is empty or already taken.
func Register(s Spec) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if s.Name == "" || s.New == nil {
		panic("engine: Register of a Spec without a name or a constructor")
	}
	if _, dup := registry[s.Name]; dup {
		panic("engine: Register called twice for " + s.Name)
	}
	registry[s.Name] = s
}

// Names lists the registered engines, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Check reports the first knob of c that its engine cannot use, as a
// *FieldError: an unknown name, or a finding of the engine's own check.
func Check(c Config) error {
	s, ok := lookup(c.Name)
	switch {
	case !ok:
		return badField("rollout_engine", "%q is not %s", c.Name, english.Or(Names()))
	case s.Check != nil:
		return s.Check(c)
	}
	return nil
}

// New checks c and makes its engine, sampling from p.
func New(c Config, p Policy) (Engine, error) {
	if err := Check(c); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	s, _ := lookup(c.Name)
	return s.New(c, p)
}

func lookup(name string) (Spec, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	s, ok := registry[name]
	return s, ok
}
