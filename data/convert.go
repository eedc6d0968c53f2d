package data

import (
	"archive/tar"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mathrl/mathrl/internal/boxed"
	"github.com/mathrl/mathrl/internal/jsonl"
	"github.com/mathrl/mathrl/internal/pyrandom"
)

// This file turns each public origin's format into Rows; origins.go says where
// the origins are. The rules are those the published files were made with.

// Source tags of the converted rows, as the published files hold them.
const (
	math500Source = "math500 (openai/prm800k math_splits/test.jsonl)"
	aime24Source  = "aime24 (%s)" // %s: the row's AoPS URL
	aime25Source  = "aime25"
)

// The 300-label validation sample: Sample300Size rows drawn from math_train by
// CPython's random.Random(Sample300Seed).sample(pool, Sample300Size).
const (
	Sample300Seed = 20250607
	Sample300Size = 300
)

// maxMATHFile bounds one per-problem file of the MATH archive.
const maxMATHFile = 1 << 20

// mathFile is one problem of the MATH archive with its sort key.
type mathFile struct {
	subject string // folder name, e.g. counting_and_probability
	n       int    // file number
	row     Row
}

// readMATHArchive reads the per-problem MATH files from a gzip-compressed tar
// (a GitHub commit tarball): every regular file named TOP/DIR<split>/<subject>/<n>.json,
// where TOP is the archive's top folder, <split> is train or test and <n> a
// number. It returns the rows of each split ordered by subject folder, then
// number; other files are skipped. name (the URL) is used in errors.
func readMATHArchive(r io.Reader, name, dir string) (map[string][]Row, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	files := map[string][]mathFile{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		_, rel, _ := strings.Cut(h.Name, "/")
		rel, ok := strings.CutPrefix(rel, dir)
		parts := strings.Split(rel, "/")
		if h.Typeflag != tar.TypeReg || !ok || len(parts) != 3 || (parts[0] != "train" && parts[0] != "test") || !strings.HasSuffix(parts[2], ".json") {
			continue
		}
		f, err := readMATHFile(tr, parts[0], parts[1], parts[2])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, h.Name, err)
		}
		files[parts[0]] = append(files[parts[0]], f)
	}
	rows := map[string][]Row{}
	for split, fs := range files {
		slices.SortFunc(fs, func(a, b mathFile) int { return cmp.Or(strings.Compare(a.subject, b.subject), cmp.Compare(a.n, b.n)) })
		for _, f := range fs {
			rows[split] = append(rows[split], f.row)
		}
	}
	return rows, nil
}

// readMATHFile converts one per-problem file (fields problem, level "Level N",
// type, solution) to a Row with id <split>/<subject>/<file>.
func readMATHFile(r io.Reader, split, subject, file string) (mathFile, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(file, ".json"))
	if err != nil {
		return mathFile{}, errors.New("file name is not <number>.json")
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxMATHFile+1))
	if err != nil {
		return mathFile{}, err
	}
	if len(raw) > maxMATHFile {
		return mathFile{}, fmt.Errorf("larger than %d bytes", maxMATHFile)
	}
	obj, err := jsonl.Object(raw)
	if err != nil {
		return mathFile{}, err
	}
	row := Row{ID: split + "/" + subject + "/" + file, Source: "hendrycks_math/" + split}
	if row.Problem, err = nonEmptyString(obj, "problem"); err != nil {
		return mathFile{}, err
	}
	solution, err := jsonl.String(obj, "solution")
	if err != nil {
		return mathFile{}, err
	}
	row.Solution = &solution
	if answer, ok := boxed.Last(solution); ok && answer != "" {
		row.Answer = &answer
	}
	typ, err := nonEmptyString(obj, "type")
	if err != nil {
		return mathFile{}, err
	}
	row.Subject = &typ
	if row.Level, err = mathLevel(obj); err != nil {
		return mathFile{}, err
	}
	return mathFile{subject: subject, n: n, row: row}, nil
}

// mathLevel reads MATH's level field: "Level N" gives N, "Level ?" gives nil.
func mathLevel(obj map[string]json.RawMessage) (*int, error) {
	s, err := jsonl.String(obj, "level")
	if err != nil {
		return nil, err
	}
	digits, ok := strings.CutPrefix(s, "Level ")
	if digits == "?" {
		return nil, nil
	}
	n, err := strconv.Atoi(digits)
	if !ok || err != nil {
		return nil, &jsonl.FieldError{Field: "level", Err: fmt.Errorf(`want "Level N" or "Level ?", got %q`, s)}
	}
	return &n, nil
}

// readMATH500 reads PRM800K's math_splits/test.jsonl (fields problem, solution,
// answer, subject, level, unique_id), keeping its order; id is unique_id.
func readMATH500(r io.Reader, name string) ([]Row, error) {
	return readRows(r, name, "unique_id", func(raw []byte, _ int) (Row, error) {
		obj, err := jsonl.Object(raw)
		if err != nil {
			return Row{}, err
		}
		row := Row{Source: math500Source}
		if row.ID, err = nonEmptyString(obj, "unique_id"); err != nil {
			return Row{}, err
		}
		return row, decodeFields(obj, &row)
	})
}

// aimeURL matches the AoPS wiki URL of an AIME problem.
var aimeURL = regexp.MustCompile(`/(\d{4})_AIME_(I|II)_Problems/Problem_(\d+)$`)

// readAIME24 reads Qwen2.5-Math's evaluation/data/aime24/test.jsonl (fields
// problem, solution, answer, url). The id aime2024-<I|II>-<NN> comes from the
// AoPS URL, which is kept in source; rows are ordered by id.
func readAIME24(r io.Reader, name string) ([]Row, error) {
	rows, err := readRows(r, name, "url", func(raw []byte, _ int) (Row, error) {
		obj, err := jsonl.Object(raw)
		if err != nil {
			return Row{}, err
		}
		url, err := nonEmptyString(obj, "url")
		if err != nil {
			return Row{}, err
		}
		m := aimeURL.FindStringSubmatch(url)
		if m == nil {
			return Row{}, &jsonl.FieldError{Field: "url", Err: fmt.Errorf("%q is not an AoPS AIME problem URL", url)}
		}
		number, _ := strconv.Atoi(m[3])
		row := Row{ID: fmt.Sprintf("aime%s-%s-%02d", m[1], m[2], number), Source: fmt.Sprintf(aime24Source, url)}
		return row, decodeFields(obj, &row)
	})
	slices.SortFunc(rows, func(a, b Row) int { return strings.Compare(a.ID, b.ID) })
	return rows, err
}

// aime25Repair undoes the escaping defect of the AIME 2025 source: a \f or \t
// that JSON read as a form feed or a tab was meant as the LaTeX of \frac or
// \triangle.
var aime25Repair = strings.NewReplacer("\f", `\f`, "\t", `\t`)

// aime25Rows is the number of rows of the AIME 2025 source: AIME I 1-15, then AIME II 1-15.
const aime25Rows = 30

// readAIME25 reads math-evaluation-harness's data/aime25/test.jsonl (fields
// answer, problem), whose rows are AIME I 1-15 then AIME II 1-15, numbered
// aime2025-<I|II>-<NN> in that order; problems get aime25Repair.
func readAIME25(r io.Reader, name string) ([]Row, error) {
	rows, err := readRows(r, name, "problem", func(raw []byte, line int) (Row, error) {
		obj, err := jsonl.Object(raw)
		if err != nil {
			return Row{}, err
		}
		row := Row{ID: strconv.Itoa(line), Source: aime25Source} // numbered below
		if err := decodeFields(obj, &row); err != nil {
			return Row{}, err
		}
		row.Problem = aime25Repair.Replace(row.Problem)
		return row, nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) != aime25Rows {
		return nil, fmt.Errorf("data: %s: %d rows, want %d (AIME I and II, 15 problems each)", name, len(rows), aime25Rows)
	}
	for i := range rows {
		contest := "I"
		if i >= aime25Rows/2 {
			contest = "II"
		}
		rows[i].ID = fmt.Sprintf("aime2025-%s-%02d", contest, i%(aime25Rows/2)+1)
	}
	return rows, nil
}

// sample300Rows draws the validation sample from the math_train rows: the pool
// is the rows with an answer, sorted by id, and the rows are those CPython's
// random.Random(Sample300Seed).sample(pool, Sample300Size) returns, in its order.
func sample300Rows(train []Row) ([]Row, error) {
	var pool []Row
	for _, r := range train {
		if r.Answer != nil {
			pool = append(pool, r)
		}
	}
	if len(pool) < Sample300Size {
		return nil, fmt.Errorf("data: sample300: %d math_train rows with an answer, want at least %d", len(pool), Sample300Size)
	}
	slices.SortFunc(pool, func(a, b Row) int { return strings.Compare(a.ID, b.ID) })
	rows := make([]Row, 0, Sample300Size)
	for _, j := range pyrandom.New(Sample300Seed).Sample(len(pool), Sample300Size) {
		rows = append(rows, pool[j])
	}
	return rows, nil
}
