package grpo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/mathrl/mathrl/internal/atomicfile"
)

// checksumsFile is the index of a checkpoint folder: the SHA-256 of each of
// its other files. SaveCheckpoint writes it last, before the folder is
// renamed into place, so a crash cannot leave a folder that disagrees with
// its index: one that does was damaged afterwards (a disk error, a cut copy).
const checksumsFile = "checksums.json"

// checksums is the content of checksums.json.
type checksums struct {
	SHA256 map[string]string `json:"sha256"` // file name -> lowercase hex digest
}

// DamagedError says that a checkpoint folder failed VerifyCheckpoint, and
// which of its files.
type DamagedError struct {
	Dir     string // the checkpoint folder
	File    string // the file that failed, within Dir
	Problem string // "missing", "sha256 differs from checksums.json", ...
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("grpo: checkpoint %s is damaged: %s: %s", e.Dir, e.File, e.Problem)
}

// writeChecksums hashes every other regular file of dir into dir's
// checksums.json.
func writeChecksums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	sums := checksums{SHA256: map[string]string{}}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == checksumsFile {
			continue
		}
		if sums.SHA256[e.Name()], err = fileSHA256(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(sums, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, checksumsFile), append(data, '\n'))
}

// VerifyCheckpoint checks the files of the checkpoint folder dir against its
// checksums.json and returns a *DamagedError naming the first one (in name
// order) that is missing or differs, or the index itself when it is missing
// or unreadable. A folder of layout version 2, written before the index
// existed, has none: it passes unchecked, with verified false.
func VerifyCheckpoint(dir string) (verified bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, checksumsFile))
	if errors.Is(err, os.ErrNotExist) {
		if st, err := readTrainState(dir); err == nil && st.Version == 2 {
			return false, nil
		}
		return false, &DamagedError{Dir: dir, File: checksumsFile, Problem: "missing"}
	}
	if err != nil {
		return false, &DamagedError{Dir: dir, File: checksumsFile, Problem: err.Error()}
	}
	var sums checksums
	if err := json.Unmarshal(data, &sums); err != nil || len(sums.SHA256) == 0 {
		return false, &DamagedError{Dir: dir, File: checksumsFile, Problem: "not a checksum index"}
	}
	names := make([]string, 0, len(sums.SHA256))
	for name := range sums.SHA256 {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name != filepath.Base(name) {
			return false, &DamagedError{Dir: dir, File: checksumsFile, Problem: fmt.Sprintf("names %q, not a file of the folder", name)}
		}
		got, err := fileSHA256(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return false, &DamagedError{Dir: dir, File: name, Problem: "missing"}
		}
		if err != nil {
			return false, &DamagedError{Dir: dir, File: name, Problem: err.Error()}
		}
		if got != sums.SHA256[name] {
			return false, &DamagedError{Dir: dir, File: name, Problem: "sha256 differs from " + checksumsFile}
		}
	}
	return true, nil
}

// fileSHA256 returns the hex SHA-256 of the file path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
