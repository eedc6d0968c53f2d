package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mathrl/mathrl/internal/atomicfile"
)

// MirrorEnv names the environment variable holding the default mirror for Pull:
// a folder or an http(s) URL base with the dataset files as published.
const MirrorEnv = "MATHRL_DATA_MIRROR"

// ErrMissing is returned (wrapped) by Set.Check when the file is not there.
var ErrMissing = errors.New("not present")

// PullOptions says where Pull takes the files from and where it puts them.
type PullOptions struct {
	From     string       // mirror: folder or http(s) URL base; empty: $MATHRL_DATA_MIRROR, else the public origins
	Dir      string       // destination folder; empty: DefaultDir()
	Sets     []string     // set names (see Sets); empty: DefaultSets()
	Client   *http.Client // for URLs; nil: http.DefaultClient
	Origins  *Origins     // public origins used without a mirror; nil: DefaultOrigins
	Progress io.Writer    // one line per file when not nil
}

// Pull brings the chosen sets into opts.Dir. A file already there with the right
// sha256 is left alone. Otherwise the file is copied from the mirror folder,
// downloaded from the mirror URL base, or, without a mirror, converted from its
// public origin (see Origins); its bytes go to a temporary file while their
// sha256 is computed, and it is renamed into place only when size and checksum
// match. On a mismatch nothing is left behind and the error names the file, its
// source and both checksums. A set with no pinned sha256 (Set.SHA256 "") is
// checked against the one recorded at its first download (see Set.Recorded),
// and that first download records it. Every set is tried; the errors of all
// failed sets are returned together.
func Pull(ctx context.Context, opts PullOptions) error {
	from := opts.From
	if from == "" {
		from = os.Getenv(MirrorEnv)
	}
	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir()
	}
	sets, err := chooseSets(opts.Sets)
	if err != nil {
		return err
	}
	return pullSets(ctx, opts, from, dir, sets)
}

// source gives the bytes of a set's file and says where they came from.
type source interface {
	open(ctx context.Context, s Set) (io.ReadCloser, string, error)
}

// pullSets is Pull once the mirror (empty: the public origins), the folder and
// the sets are resolved.
func pullSets(ctx context.Context, opts PullOptions, from, dir string, sets []Set) error {
	client := opts.Client
	if client == nil {
		client = http.DefaultClient
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	var src source = mirrorSource{client: client, from: from}
	if from == "" {
		origins := DefaultOrigins
		if opts.Origins != nil {
			origins = *opts.Origins
		}
		src = &originSource{client: client, origins: origins}
	}

	var errs []error
	for _, s := range sets {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("data: pull: %w", err)
		}
		if s.Check(dir) == nil {
			fmt.Fprintf(progress, "%s: already present, sha256 ok\n", s.File)
			continue
		}
		got, err := pullOne(ctx, src, dir, s)
		if err != nil {
			fmt.Fprintf(progress, "%s: FAILED\n", s.File)
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(progress, "%s: %d bytes from %s, %s\n", s.File, got.bytes, got.from, got.verdict)
	}
	return errors.Join(errs...)
}

// chooseSets resolves set names, keeping the order given; no names means DefaultSets.
func chooseSets(names []string) ([]Set, error) {
	if len(names) == 0 {
		return DefaultSets(), nil
	}
	sets := make([]Set, 0, len(names))
	for _, n := range names {
		s, err := SetByName(n)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return sets, nil
}

// isURL reports whether from is an http(s) URL rather than a folder.
func isURL(from string) bool {
	return strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://")
}

// mirrorSource is a folder or an http(s) URL base holding the files as published.
type mirrorSource struct {
	client *http.Client
	from   string
}

// open opens the set's file in the mirror and returns its path or URL.
func (m mirrorSource) open(ctx context.Context, s Set) (io.ReadCloser, string, error) {
	if !isURL(m.from) {
		src := filepath.Join(m.from, s.File)
		f, err := os.Open(src)
		return f, src, err
	}
	u, err := url.JoinPath(m.from, s.File)
	if err != nil {
		return nil, "", fmt.Errorf("bad URL base %q: %w", m.from, err)
	}
	body, err := httpGet(ctx, m.client, u)
	return body, u, err
}

// maxUnpinned bounds the size of a set that has no pinned sha256.
const maxUnpinned = 1 << 30

// pulled is what pullOne brought: from where, its size, and how it was checked.
type pulled struct {
	from    string
	bytes   int64
	verdict string // for the progress line, e.g. "sha256 ok"
}

// pullOne brings one set from src into dir.
func pullOne(ctx context.Context, src source, dir string, s Set) (pulled, error) {
	body, from, err := src.open(ctx, s)
	if err != nil {
		return pulled{}, fmt.Errorf("data: %s: %w", s.File, err)
	}
	defer body.Close()

	out, err := atomicfile.Create(s.Path(dir))
	if err != nil {
		return pulled{}, fmt.Errorf("data: %s: %w", s.File, err)
	}
	defer out.Abort()
	limit := s.Bytes
	if s.SHA256 == "" {
		limit = maxUnpinned
	}
	h := sha256.New()
	// Read at most one byte more than expected: enough to tell a longer file.
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(body, limit+1))
	if err != nil {
		return pulled{}, fmt.Errorf("data: %s: reading %s: %w", s.File, from, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if s.SHA256 == "" {
		return commitUnpinned(out, dir, s, pulled{from: from, bytes: n}, sum)
	}
	switch {
	case n > s.Bytes:
		return pulled{}, fmt.Errorf("data: %s from %s: longer than %d bytes (sha256 of the first %d bytes %s, want %s)", s.File, from, s.Bytes, n, sum, s.SHA256)
	case n < s.Bytes:
		return pulled{}, fmt.Errorf("data: %s from %s: %d bytes, want %d (sha256 %s, want %s)", s.File, from, n, s.Bytes, sum, s.SHA256)
	case sum != s.SHA256:
		return pulled{}, fmt.Errorf("data: %s from %s: sha256 %s, want %s", s.File, from, sum, s.SHA256)
	}
	if err := out.Commit(); err != nil {
		return pulled{}, fmt.Errorf("data: %s: %w", s.File, err)
	}
	return pulled{from: from, bytes: n, verdict: "sha256 ok"}, nil
}

// commitUnpinned puts the file of a set without a pinned sha256 in place: when
// dir has its sha256 recorded the file must match it; when not, this is the
// first download and its sha256 is recorded.
func commitUnpinned(out *atomicfile.File, dir string, s Set, got pulled, sum string) (pulled, error) {
	if got.bytes > maxUnpinned {
		return pulled{}, fmt.Errorf("data: %s from %s: longer than %d bytes", s.File, got.from, int64(maxUnpinned))
	}
	recorded, err := s.Recorded(dir)
	if err != nil {
		return pulled{}, err
	}
	if recorded != "" && sum != recorded {
		return pulled{}, fmt.Errorf("data: %s from %s: sha256 %s, but %s recorded %s at the first download: the file changed (delete %s to accept the new one)",
			s.File, got.from, sum, s.recordPath(dir), recorded, s.recordPath(dir))
	}
	if err := out.Commit(); err != nil {
		return pulled{}, fmt.Errorf("data: %s: %w", s.File, err)
	}
	if recorded != "" {
		got.verdict = "sha256 ok (as recorded at the first download)"
		return got, nil
	}
	if err := atomicfile.WriteFile(s.recordPath(dir), []byte(sum+"  "+s.File+"\n")); err != nil {
		return pulled{}, fmt.Errorf("data: %w", err)
	}
	got.verdict = fmt.Sprintf("sha256 %s recorded in %s (first download; later pulls must match it)", sum, s.recordPath(dir))
	return got, nil
}

// recordPath is where the sha256 of a set without a pinned one is recorded:
// beside its file, as <file>.sha256 in sha256sum's format.
func (s Set) recordPath(dir string) string { return s.Path(dir) + ".sha256" }

// Recorded returns the sha256 recorded in dir for a set that has none pinned
// (Set.SHA256 ""): the one of its first download, kept in <file>.sha256 in
// sha256sum's format. It returns "" when nothing is recorded, and an error
// naming the file when it is not one hex sha256 and the set's file name.
func (s Set) Recorded(dir string) (string, error) {
	path := s.recordPath(dir)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("data: %w", err)
	}
	sum, name, ok := strings.Cut(strings.TrimSuffix(string(raw), "\n"), "  ")
	if _, hexErr := hex.DecodeString(sum); !ok || len(sum) != 64 || hexErr != nil || name != s.File {
		return "", fmt.Errorf("data: %s: want one line \"<sha256>  %s\", got %q", path, s.File, raw)
	}
	return strings.ToLower(sum), nil // sha256sum -c reads either case
}

// httpGet starts a GET of u and returns its body, or an error for any status but 200.
func httpGet(ctx context.Context, client *http.Client, u string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return resp.Body, nil
}

// Check reports whether the set's file is in dir with the right size and sha256:
// nil when it is, an error wrapping ErrMissing when there is no file, another
// error naming both checksums when the content differs.
func (s Set) Check(dir string) error {
	path := s.Path(dir)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data: %s: %w", path, ErrMissing)
	}
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("data: %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if s.SHA256 == "" {
		recorded, err := s.Recorded(dir)
		switch {
		case err != nil:
			return err
		case recorded == "":
			return fmt.Errorf("data: %s: no sha256 recorded for it (%s is missing): pull it again", path, s.recordPath(dir))
		case sum != recorded:
			return fmt.Errorf("data: %s: sha256 %s; %s recorded %s at the first download", path, sum, s.recordPath(dir), recorded)
		}
		return nil
	}
	if n != s.Bytes || sum != s.SHA256 {
		return fmt.Errorf("data: %s: %d bytes, sha256 %s; want %d bytes, sha256 %s", path, n, sum, s.Bytes, s.SHA256)
	}
	return nil
}

// List writes a table of the known sets to w: name, file, rows, bytes, and
// whether the file in dir is present and matches its checksum.
func List(w io.Writer, dir string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SET\tFILE\tROWS\tBYTES\tSTATUS")
	for _, s := range Sets {
		status := "ok"
		if err := s.Check(dir); errors.Is(err, ErrMissing) {
			status = "missing"
		} else if err != nil {
			status = "BAD: size or sha256 differs (pull again)"
		}
		size := strconv.FormatInt(s.Bytes, 10)
		if s.SHA256 == "" {
			size = "-" // unknown until the first download; its sha256 is recorded then
		}
		if s.OnRequest && status == "missing" {
			status = "missing (pulled only with --set " + s.Name + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, s.File, s.Rows, size, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "folder: %s\n", dir)
	return err
}
