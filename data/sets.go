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
	Name   string // short name used on the command line, e.g. "math500"
	File   string // file name inside the data folder
	SHA256 string // hex sha256 of the whole file
	Bytes  int64  // file size
	Rows   int    // number of rows
}

// Sets lists the known datasets in their canonical order. The checksums are
// those of the published files; Pull refuses any file that does not match.
var Sets = []Set{
	{"sample300", "math_train_sample300.jsonl", "423ad489ed0082ebd1cdd35cea0b7e3a6fd8de43dfde7dbffaa2f31dce23ec4d", 283441, 300},
	{"math_train", "math_train.jsonl", "ef43babb26c0791b46237bbfd97b2f1772772994fa0d731193bc5339b8d5e99a", 7170135, 7500},
	{"math_test", "math_test.jsonl", "3c9bb685ebe3d64fd94cfc5634d9dcd72e8903304ae603135af3badfa28560c3", 4506889, 5000},
	{"math500", "math500.jsonl", "2b9858c0236917290494b4482f5b5c71e9be726547abd02b55143f0f5cd19bf2", 473564, 500},
	{"aime24", "aime24.jsonl", "cda45d8fdaabf23647b40be57aac74b8a60559eb209ebef604980f9521542748", 147933, 30},
	{"aime25", "aime25.jsonl", "e563bd2fcf2bff9a64130a284b5b1f007d0dc418a306c5686d5ac714c98c4717", 18335, 30},
}

// SetByName returns the Set called name, or an error listing the known names.
func SetByName(name string) (Set, error) {
	for _, s := range Sets {
		if s.Name == name {
			return s, nil
		}
	}
	return Set{}, fmt.Errorf("data: unknown set %q (known: %s)", name, strings.Join(SetNames(), ", "))
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
			return nil, fmt.Errorf("data: set %s not found in %s (run `mathrl data pull`): %w", name, dir, err)
		}
		return nil, err
	}
	return rows, nil
}
