package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Set is one dataset file that Pull knows how to fetch and check.
type Set struct {
	Name      string // short name used on the command line, e.g. "math500"
	File      string // file name inside the data folder
	SHA256    string // hex sha256 of the whole file; "" where none could be pinned (see Set.Recorded)
	Bytes     int64  // file size, with SHA256
	Rows      int    // number of rows
	OnRequest bool   // pulled only when named: a large training set that no test needs
}

// Sets lists the known datasets in their canonical order. The checksums are
// those of the published files; Pull refuses any file that does not match.
// A set without one has the sha256 of its first download recorded beside it,
// and every later file must match that.
var Sets = []Set{
	{Name: "sample300", File: "math_train_sample300.jsonl", SHA256: "423ad489ed0082ebd1cdd35cea0b7e3a6fd8de43dfde7dbffaa2f31dce23ec4d", Bytes: 283441, Rows: 300},
	{Name: "math_train", File: "math_train.jsonl", SHA256: "ef43babb26c0791b46237bbfd97b2f1772772994fa0d731193bc5339b8d5e99a", Bytes: 7170135, Rows: 7500},
	{Name: "math_test", File: "math_test.jsonl", SHA256: "3c9bb685ebe3d64fd94cfc5634d9dcd72e8903304ae603135af3badfa28560c3", Bytes: 4506889, Rows: 5000},
	{Name: "math500", File: "math500.jsonl", SHA256: "2b9858c0236917290494b4482f5b5c71e9be726547abd02b55143f0f5cd19bf2", Bytes: 473564, Rows: 500},
	{Name: "aime24", File: "aime24.jsonl", SHA256: "cda45d8fdaabf23647b40be57aac74b8a60559eb209ebef604980f9521542748", Bytes: 147933, Rows: 30},
	{Name: "aime25", File: "aime25.jsonl", SHA256: "e563bd2fcf2bff9a64130a284b5b1f007d0dc418a306c5686d5ac714c98c4717", Bytes: 18335, Rows: 30},
	{Name: DAPOSet, File: "dapo_math_17k.jsonl", Rows: 17398, OnRequest: true},
}

// DAPOSet is the name of DAPO-Math-17k as slime's retool recipe trains on it.
const DAPOSet = "dapo_math_17k"

// SetByName returns the Set called name, or an error listing the known names.
func SetByName(name string) (Set, error) {
	for _, s := range Sets {
		if s.Name == name {
			return s, nil
		}
	}
	return Set{}, fmt.Errorf("data: unknown set %q (known: %s)", name, strings.Join(SetNames(), ", "))
}

// DefaultSets returns the sets Pull brings when none are named: all of Sets
// but those pulled only on request.
func DefaultSets() []Set {
	var sets []Set
	for _, s := range Sets {
		if !s.OnRequest {
			sets = append(sets, s)
		}
	}
	return sets
}

// SetNames returns the names of Sets, in order.
func SetNames() []string {
	names := make([]string, len(Sets))
	for i, s := range Sets {
		names[i] = s.Name
	}
	return names
}

// Path returns where the set's file lives inside the data folder dir.
func (s Set) Path(dir string) string { return filepath.Join(dir, s.File) }

// DataDirEnv names the environment variable that overrides DefaultDir.
const DataDirEnv = "MATHRL_DATA_DIR"

// DefaultDir returns the data folder: $MATHRL_DATA_DIR when set, else
// mathrl/data under the user cache folder (os.UserCacheDir), else, when the system
// has no user cache folder, mathrl/data under os.TempDir.
func DefaultDir() string {
	if d := os.Getenv(DataDirEnv); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "mathrl", "data")
}

// LoadSet reads and validates the named set from the data folder dir (see Read).
func LoadSet(dir, name string) ([]Row, error) {
	s, err := SetByName(name)
	if err != nil {
		return nil, err
	}
	rows, err := ReadFile(s.Path(dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("data: set %s is not in %s: run `mathrl data pull --set %s` to get it: %w", name, dir, name, err)
		}
		return nil, err
	}
	return rows, nil
}
