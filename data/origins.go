package data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Origin is one public file that sets are converted from when Pull has no
// mirror. Every URL names a fixed commit, but DAPO's (see DAPORevision).
type Origin struct {
	URLs   []string // tried in order until one answers (and, with SHA256, matches)
	SHA256 string   // hex sha256 of the file where its checksum is published; "" where it is not
	Bytes  int64    // its size, with SHA256
	Dir    string   // in an archive: the folder below the top folder that holds the files
	About  string   // what Pull takes from it, for help texts
}

// Origins are the public files of the known sets.
type Origins struct {
	MATH    Origin // per-problem MATH files: math_train, math_test, and sample300 drawn from math_train
	MATH500 Origin // PRM800K's 500-problem MATH test subset: math500
	AIME24  Origin // AIME 2024 I and II: aime24
	AIME25  Origin // AIME 2025 I and II: aime25
	DAPO    Origin // DAPO-Math-17k as slime's retool recipe trains on it: dapo_math_17k
}

// DefaultOrigins are the origins the published files were converted from (see
// README.md in this folder for each conversion). GitHub commit tarballs are not
// byte-stable and the raw files' checksums are not published, so only the
// PRM800K file, a Git LFS object, has its own checksum here; every converted
// file is checked against its Set.SHA256 in any case.
var DefaultOrigins = Origins{
	MATH: Origin{
		URLs:  []string{"https://codeload.github.com/aiwaves-cn/agents/tar.gz/e8c4e3c2d19739d3dff59e577d1c97090cc15f59"},
		Dir:   "src/agents/datasets/data/math/",
		About: `MATH (Hendrycks et al.) per-problem files; answer = last \boxed{} of the solution`,
	},
	MATH500: Origin{
		URLs: []string{
			"https://media.githubusercontent.com/media/openai/prm800k/7ecc794703b2877f63226f2477a49b34f9b25163/prm800k/math_splits/test.jsonl",
			"https://raw.githubusercontent.com/Zhuofeng-Li/math-evaluation-harness/1b9885d817962a8494728376625ce6605772edbd/data/math500/test.jsonl",
		},
		SHA256: "35dc41080a3680858b27fa7e0533d2d547825316fc5dafe5d316f4ccc5a06132",
		Bytes:  446564,
		About:  "PRM800K math_splits/test.jsonl (or its byte-identical copy); id = unique_id",
	},
	AIME24: Origin{
		URLs:  []string{"https://raw.githubusercontent.com/QwenLM/Qwen2.5-Math/a45202bd16f1ec06f433442dc1152d0074773465/evaluation/data/aime24/test.jsonl"},
		About: "Qwen2.5-Math evaluation data; id from each row's AoPS URL",
	},
	AIME25: Origin{
		URLs:  []string{"https://raw.githubusercontent.com/Zhuofeng-Li/math-evaluation-harness/ba004e3d9d6b74521cbad30a6c3dce3bd80aa427/data/aime25/test.jsonl"},
		About: `math-evaluation-harness data; form feeds and tabs repaired to \f and \t`,
	},
	DAPO: Origin{
		URLs:  []string{"https://huggingface.co/datasets/zhuzilin/dapo-math-17k/resolve/" + DAPORevision + "/dapo-math-17k.jsonl"},
		About: "DAPO-Math-17k deduplicated, in slime's layout ({prompt, label}), the file slime's examples/retool trains on; id = line number",
	},
}

// DAPORevision is the revision of the Hugging Face dataset zhuzilin/dapo-math-17k
// that dapo_math_17k is pulled from. No commit of it was known when the set was
// added, so the branch is named; the sha256 recorded at the first download (see
// Set.Recorded) is what holds the file fixed.
const DAPORevision = "main"

// Describe lists, for help texts, which sets come from which origin.
func (o Origins) Describe() string {
	var b strings.Builder
	for _, e := range []struct {
		sets string
		o    Origin
	}{{"math_train, math_test", o.MATH}, {"math500", o.MATH500}, {"aime24", o.AIME24}, {"aime25", o.AIME25}, {DAPOSet, o.DAPO}} {
		fmt.Fprintf(&b, "  %s: %s\n", e.sets, e.o.About)
		for _, u := range e.o.URLs {
			fmt.Fprintf(&b, "      %s\n", u)
		}
	}
	fmt.Fprintf(&b, "  sample300: drawn from math_train with CPython's random.Random(%d).sample(pool, %d)\n", Sample300Seed, Sample300Size)
	return b.String()
}

// originSource converts sets from their public origins.
type originSource struct {
	client  *http.Client
	origins Origins
	math    map[string][]Row // the MATH rows by split, read once per Pull
	mathURL string
	mathErr error
}

// open converts set s from its origin and returns the file's bytes and the URL used.
func (o *originSource) open(ctx context.Context, s Set) (io.ReadCloser, string, error) {
	rows, url, err := o.rows(ctx, s.Name)
	if err != nil {
		return nil, "", err
	}
	return io.NopCloser(bytes.NewReader(EncodeRows(rows))), url + " (converted)", nil
}

// rows returns the rows of the set called name and the URL they came from.
func (o *originSource) rows(ctx context.Context, name string) ([]Row, string, error) {
	var rows []Row
	read := func(read func(io.Reader, string) ([]Row, error)) func(io.Reader, string) error {
		return func(r io.Reader, url string) (err error) {
			rows, err = read(r, url)
			return err
		}
	}
	switch name {
	case "math_train", "math_test", "sample300":
		if o.math == nil && o.mathErr == nil {
			o.mathURL, o.mathErr = o.fetch(ctx, o.origins.MATH, func(r io.Reader, url string) (err error) {
				o.math, err = readMATHArchive(r, url, o.origins.MATH.Dir)
				return err
			})
		}
		if o.mathErr != nil {
			return nil, "", o.mathErr
		}
		if name == "sample300" {
			rows, err := sample300Rows(o.math["train"])
			return rows, o.mathURL, err
		}
		return o.math[strings.TrimPrefix(name, "math_")], o.mathURL, nil
	case "math500":
		url, err := o.fetch(ctx, o.origins.MATH500, read(readMATH500))
		return rows, url, err
	case "aime24":
		url, err := o.fetch(ctx, o.origins.AIME24, read(readAIME24))
		return rows, url, err
	case "aime25":
		url, err := o.fetch(ctx, o.origins.AIME25, read(readAIME25))
		return rows, url, err
	case DAPOSet:
		url, err := o.fetch(ctx, o.origins.DAPO, read(ReadDAPO))
		return rows, url, err
	}
	return nil, "", fmt.Errorf("no public origin known for set %q", name)
}

// fetch downloads org from each of its URLs in turn and gives the body to read,
// until one works; it returns that URL, or the errors of all of them.
func (o *originSource) fetch(ctx context.Context, org Origin, read func(r io.Reader, url string) error) (string, error) {
	var errs []error
	for _, u := range org.URLs {
		err := o.fetchOne(ctx, org, u, read)
		if err == nil {
			return u, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return "", errors.Join(errs...)
}

// fetchOne is fetch from the one URL u; with org.SHA256 the whole file is
// checked before read sees it.
func (o *originSource) fetchOne(ctx context.Context, org Origin, u string, read func(io.Reader, string) error) error {
	body, err := httpGet(ctx, o.client, u)
	if err != nil {
		return err
	}
	defer body.Close()
	if org.SHA256 == "" {
		return read(body, u)
	}
	raw, err := io.ReadAll(io.LimitReader(body, org.Bytes+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", u, err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); int64(len(raw)) != org.Bytes || got != org.SHA256 {
		return fmt.Errorf("%s: %d bytes, sha256 %s; want %d bytes, sha256 %s: the published file changed", u, len(raw), got, org.Bytes, org.SHA256)
	}
	return read(bytes.NewReader(raw), u)
}
