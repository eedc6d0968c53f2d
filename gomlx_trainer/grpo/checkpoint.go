package grpo

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gomlx/compute/dtypes"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/analysis/runs"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/atomicfile"
)

// TrainState is everything besides the weights that a run needs to continue
// exactly where it stopped.
type TrainState struct {
	Version      int    `json:"version"`       // CheckpointVersion
	Rollout      int    `json:"rollout"`       // rollouts completed
	Step         int    `json:"step"`          // optimizer steps completed (warm start excluded)
	SFTStep      int    `json:"sft_step"`      // warm-start steps completed
	DataEpoch    int    `json:"data_epoch"`    // passes over the training prompts started
	DataPosition int    `json:"data_position"` // next prompt within the epoch's order
	RNG          []byte `json:"rng"`           // the trainer's PCG state (data order, sampling seeds)
	Config       Config `json:"config"`        // the run's resolved config
}

// CheckpointVersion is the version of the checkpoint layout written by
// SaveCheckpoint. Version 3 adds checksums.json, the SHA-256 of every other
// file, checked before a checkpoint is loaded. Version 2 (optimizer state as
// float32 safetensors, no index) is still read, unchecked; version 1 kept the
// optimizer state as gob and is not read.
const CheckpointVersion = 3

// oldestCheckpointVersion is the oldest layout LoadCheckpoint reads.
const oldestCheckpointVersion = 2

// The files of a checkpoint folder besides the Hugging Face ones (config.json,
// model.safetensors, tokenizer.json) and checksums.json.
const (
	stateFile     = "trainer_state.json"
	optimizerFile = "optimizer.safetensors"
)

// CheckpointName returns the folder name of the checkpoint after step.
func CheckpointName(step int) string { return runs.StepName(step) }

// SaveCheckpoint writes dir atomically: it fills a temporary sibling folder and
// renames it over dir, so a crash leaves either the old checkpoint or the new
// one (a crash between the two renames leaves the old one as dir.old, which
// the next resume puts back). The folder is a Hugging Face model folder
// (config.json, model.safetensors, and tokenizer.json when tokenizerJSON is
// set) plus the optimizer moments, the trainer state and, written last, the
// checksums of all of them. Errors name dir; a failed save (a full disk)
// leaves no temporary folder and the other checkpoints as they were.
func SaveCheckpoint(dir string, model *qwen3.Model, tokenizerJSON []byte, st TrainState) error {
	if err := saveCheckpoint(dir, model, optimizerVars(model.Store), tokenizerJSON, st, nil); err != nil {
		return fmt.Errorf("grpo: checkpoint %s: %w", dir, err)
	}
	return nil
}

// saveCheckpoint is SaveCheckpoint without the folder in its errors, with the
// optimizer state given (see Learner.stateVariables), marking the phase (see
// PhaseMarks) once the temporary folder exists.
func saveCheckpoint(dir string, model *qwen3.Model, state []*mlmodel.Variable, tokenizerJSON []byte, st TrainState, marks *PhaseMarks, extra ...extraFile) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+tmpInfix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone after the rename; cleans up after a failure
	marks.mark("save %s", filepath.Base(dir))
	if err := fillCheckpoint(tmp, model, state, tokenizerJSON, st, extra); err != nil {
		return err
	}
	old := dir + oldSuffix
	os.RemoveAll(old)
	if _, err := os.Stat(dir); err == nil {
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	os.RemoveAll(old)
	return nil
}

// The names a crash in SaveCheckpoint can leave beside step-NNNNNN:
// .step-NNNNNN.tmp-XXXX (a folder being filled) and step-NNNNNN.old (the
// previous checkpoint of the same step, between the two renames).
const (
	tmpInfix  = ".tmp-"
	oldSuffix = ".old"
)

// damagedSuffix marks a checkpoint folder that failed VerifyCheckpoint and
// was set aside by a resume.
const damagedSuffix = ".damaged"

// savedDType is the safetensors dtype a policy's weights are saved in: its own.
func savedDType(model *qwen3.Model) string {
	if model.DType == dtypes.BFloat16 {
		return "BF16"
	}
	return "F32"
}

// extraFile is a file of variables a checkpoint holds beside the policy's
// (the implicit PRM's, prmFile), written as writeOptimizer writes.
type extraFile struct {
	name string
	vars []*mlmodel.Variable
}

// fillCheckpoint writes the files of a checkpoint into the folder tmp.
func fillCheckpoint(tmp string, model *qwen3.Model, state []*mlmodel.Variable, tokenizerJSON []byte, st TrainState, extra []extraFile) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := model.Save(tmp, savedDType(model)); err != nil {
		return err
	}
	if tokenizerJSON != nil {
		if err := atomicfile.WriteFile(filepath.Join(tmp, "tokenizer.json"), tokenizerJSON); err != nil {
			return err
		}
	}
	// FlowRL's log Z head rides with the optimizer state: not a Hugging Face tensor, it stays out of model.safetensors
	state = append(slices.Clip(state), flowHeadVars(model.Store)...)
	if err := writeOptimizer(filepath.Join(tmp, optimizerFile), state); err != nil {
		return fmt.Errorf("optimizer state: %w", err)
	}
	for _, f := range extra {
		if err := writeOptimizer(filepath.Join(tmp, f.name), f.vars); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	st.Version = CheckpointVersion
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(tmp, stateFile), append(data, '\n')); err != nil {
		return err
	}
	return writeChecksums(tmp)
}

// readTrainState reads dir/trainer_state.json.
func readTrainState(dir string) (TrainState, error) {
	st := TrainState{Config: Default()} // keys newer than the checkpoint keep their defaults
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return st, fmt.Errorf("grpo: checkpoint: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("grpo: checkpoint %s: %w", filepath.Join(dir, stateFile), err)
	}
	if st.Version < oldestCheckpointVersion || st.Version > CheckpointVersion {
		return st, fmt.Errorf("grpo: checkpoint %s: version %d, this build reads %d to %d", dir, st.Version, oldestCheckpointVersion, CheckpointVersion)
	}
	return st, nil
}

// LoadCheckpoint checks a checkpoint folder against its checksums (see
// VerifyCheckpoint) and reads it: the model in dtype, with the optimizer
// moments restored into its context, and the trainer state.
func LoadCheckpoint(dir string, dtype dtypes.DType) (*qwen3.Model, TrainState, error) {
	if _, err := VerifyCheckpoint(dir); err != nil {
		return nil, TrainState{}, err
	}
	return loadCheckpoint(dir, dtype)
}

// loadCheckpoint is LoadCheckpoint without the check.
func loadCheckpoint(dir string, dtype dtypes.DType) (*qwen3.Model, TrainState, error) {
	st, err := readTrainState(dir)
	if err != nil {
		return nil, st, err
	}
	model, err := qwen3.Load(dir, dtype)
	if err != nil {
		return nil, st, fmt.Errorf("grpo: checkpoint: %w", err)
	}
	if err := readOptimizerState(dir, model.Store); err != nil {
		return nil, st, err
	}
	return model, st, nil
}

// LatestCheckpoint returns the folder of the highest step-NNNNNN checkpoint
// under ckptDir that has a trainer state, or "" when there is none. It does
// not check the checksums.
func LatestCheckpoint(ckptDir string) (string, error) {
	names, err := checkpointNames(ckptDir)
	for i := len(names) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(ckptDir, names[i], stateFile)); err == nil {
			return filepath.Join(ckptDir, names[i]), nil
		}
	}
	return "", err
}

// checkpointNames returns the names of the step-NNNNNN folders of ckptDir in
// step order (none when there is no ckptDir).
func checkpointNames(ckptDir string) ([]string, error) {
	entries, err := os.ReadDir(ckptDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grpo: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "step-") && !strings.Contains(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// resumeCheckpoint returns the newest checkpoint under ckptDir that passes
// VerifyCheckpoint, or "" when ckptDir holds no checkpoint at all. The
// damaged ones after it are renamed step-NNNNNN.damaged (out of the way of
// later saves and prunes, kept to look at), each with one line on log naming
// its folder and the file that failed. When every checkpoint is damaged it
// reports each, renames none and returns an error.
func resumeCheckpoint(ckptDir string, log *progress) (string, error) {
	names, err := checkpointNames(ckptDir)
	if err != nil {
		return "", err
	}
	var damaged []*DamagedError
	for i := len(names) - 1; i >= 0; i-- {
		dir := filepath.Join(ckptDir, names[i])
		verified, err := VerifyCheckpoint(dir)
		var d *DamagedError
		if errors.As(err, &d) {
			damaged = append(damaged, d)
			continue
		}
		if err != nil {
			return "", err
		}
		if !verified {
			log.Printf("%s: layout version 2 has no checksums; not verified", dir)
		}
		return dir, setAside(damaged, log)
	}
	for _, d := range damaged {
		log.Printf("checkpoint %s is damaged (%s: %s)", d.Dir, d.File, d.Problem)
	}
	if len(damaged) > 0 {
		return "", fmt.Errorf("grpo: resume: every checkpoint in %s is damaged (see above); move the folder away to start the run again", ckptDir)
	}
	return "", nil
}

// setAside renames each damaged checkpoint folder to NAME.damaged, replacing
// an older one of that name, and says so on log.
func setAside(damaged []*DamagedError, log *progress) error {
	for _, d := range damaged {
		to := d.Dir + damagedSuffix
		log.Printf("checkpoint %s is damaged (%s: %s); kept as %s, resuming from an earlier one", d.Dir, d.File, d.Problem, filepath.Base(to))
		if err := os.RemoveAll(to); err != nil {
			return fmt.Errorf("grpo: %w", err)
		}
		if err := os.Rename(d.Dir, to); err != nil {
			return fmt.Errorf("grpo: %w", err)
		}
	}
	return nil
}

// tidyCheckpoints undoes what a crash in SaveCheckpoint left in ckptDir: it
// removes folders being filled and puts a step-NNNNNN.old back when its
// replacement never arrived (else removes it), saying so on log.
func tidyCheckpoints(ckptDir string, log *progress) error {
	entries, err := os.ReadDir(ckptDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(ckptDir, e.Name())
		switch {
		case !e.IsDir():
		case strings.HasPrefix(name, ".step-") && strings.Contains(name, tmpInfix):
			log.Printf("removing %s, a checkpoint cut short", path)
			err = os.RemoveAll(path)
		case strings.HasPrefix(name, "step-") && strings.HasSuffix(name, oldSuffix):
			dir := strings.TrimSuffix(path, oldSuffix)
			if _, statErr := os.Stat(dir); errors.Is(statErr, os.ErrNotExist) {
				log.Printf("restoring %s from %s, left between two renames", dir, path)
				err = os.Rename(path, dir)
			} else {
				err = os.RemoveAll(path)
			}
		}
		if err != nil {
			return fmt.Errorf("grpo: %w", err)
		}
	}
	return nil
}

// pruneCheckpoints removes all but the newest keep checkpoints (keep 0 keeps all).
func pruneCheckpoints(ckptDir string, keep int) error {
	if keep <= 0 {
		return nil
	}
	names, err := checkpointNames(ckptDir)
	if err != nil {
		return err
	}
	for len(names) > keep {
		if err := os.RemoveAll(filepath.Join(ckptDir, names[0])); err != nil {
			return fmt.Errorf("grpo: %w", err)
		}
		names = names[1:]
	}
	return nil
}

// optimizerVars are the variables of the optimizer state: under AdamScope
// (moments and step), GradAccumScope (gradient accumulators) and MasterScope
// (the master values of 16-bit weights).
func optimizerVars(store *mlmodel.Store) []*mlmodel.Variable {
	var vars []*mlmodel.Variable
	for v := range store.IterVariables() {
		if isOptimizerScope(v.Scope()) {
			vars = append(vars, v)
		}
	}
	return vars
}

func isOptimizerScope(scope string) bool {
	return strings.HasPrefix(scope, AdamScope) || strings.HasPrefix(scope, GradAccumScope) || strings.HasPrefix(scope, MasterScope)
}

// writeOptimizer writes the optimizer state's variables to path as float32 safetensors
// (which hold float32, bfloat16 and int16 state exactly), one tensor per
// variable named by its path, one tensor in memory at a time; the file
// appears whole or not at all.
func writeOptimizer(path string, state []*mlmodel.Variable) error {
	var list []qwen3.WriteTensor
	for _, v := range state {
		if !v.HasValue() {
			continue // an accumulator between steps (see Learner.freeAccumulators), or state at its zero initial value
		}
		list = append(list, qwen3.WriteTensor{Name: v.Path(), Shape: v.Shape().Dimensions,
			Values: func() ([]float32, error) {
				t, err := v.Value()
				if err != nil {
					return nil, err
				}
				return stateFloat32s(t)
			}})
	}
	return qwen3.WriteSafetensors(path, "F32", list)
}

// readOptimizerState restores a checkpoint folder's optimizer state into store.
func readOptimizerState(dir string, store *mlmodel.Store) error {
	path := filepath.Join(dir, optimizerFile)
	if err := readOptimizer(path, store); err != nil {
		return fmt.Errorf("grpo: checkpoint %s: %w", path, err)
	}
	return nil
}

// readOptimizer restores the variables written by writeOptimizer into store:
// into a variable that exists in its dtype, else as a new float32 variable,
// which the learner converts to the dtype its precision settings give
// (createOptimizerState). FlowRL's log Z head (FlowRLHeadScope), saved
// beside the state, comes back as float32 variables that train only once
// InitFlowRLHead finds them (a run resumed with flowrl_log_z vargrad keeps
// them untouched).
func readOptimizer(path string, store *mlmodel.Store) error {
	return readVariables(path, store, func(name, scope string) bool {
		return isOptimizerScope(scope) || isFlowRLHeadScope(scope)
	})
}

// readVariables restores the tensors of the safetensors file path, written
// by writeOptimizer, into store: each must be one accept takes (by its name
// and scope). A tensor whose variable exists is set in the variable's dtype;
// any other becomes a new float32 variable, not trainable (see
// readOptimizer). FlowRL's head is created in InitFlowRLHead's order.
func readVariables(path string, store *mlmodel.Store, accept func(name, scope string) bool) error {
	ck, err := qwen3.OpenSafetensors(path)
	if err != nil {
		return err
	}
	defer ck.Close()
	// the head's variables are created in the order a fresh run creates them
	// (InitFlowRLHead's): the trainable variables' order is the order of the
	// gradient norm's sum, so a resumed run would otherwise round differently
	names := ck.Names()
	slices.SortStableFunc(names, compareFlowHeadPaths)
	for _, name := range names {
		i := strings.LastIndex(name, "/")
		if i < 0 || !accept(name, name[:i]) {
			return fmt.Errorf("tensor %q is not a variable this file holds", name)
		}
		v := store.GetVariable(name)
		t, err := ck.Read(name, dtypes.Float32)
		if err != nil {
			return err
		}
		if v != nil && v.DType() != dtypes.Float32 {
			vals, _ := qwen3.Float32s(t) // t is float32
			if t, err = stateTensor(vals, v.Shape()); err != nil {
				return fmt.Errorf("tensor %q: %w", name, err)
			}
		}
		if v != nil {
			if err := v.SetValue(t); err != nil {
				return fmt.Errorf("variable %s: %w", name, err)
			}
		} else {
			store.VariableWithValue(name, t).SetTrainable(false)
		}
	}
	return nil
}

// marshalRNG returns the state of a PCG source.
func marshalRNG(src *rand.PCG) []byte {
	b, _ := src.MarshalBinary() // PCG's MarshalBinary cannot fail
	return b
}
