package serve

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
)

// authorize answers 401 to a request to any path but /health that lacks
// the header Authorization: Bearer <Options.APIKey>, when the key is set.
// The key is compared in constant time.
func (s *Server) authorize(h http.Handler) http.Handler {
	if s.opt.APIKey == "" {
		return h
	}
	want := []byte("Bearer " + s.opt.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mathrl serve"`)
			writeError(w, http.StatusUnauthorized, errors.New("missing or wrong API key: send Authorization: Bearer <the server's --api-key>"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// errOutsideRoot is the answer to a model_path outside the weights root,
// the same whether the path exists or not.
var errOutsideRoot = errors.New("model_path: outside the weights root")

// resolveRoot returns the weights root with every symlink resolved ("" when
// none is set); it must be a folder.
func resolveRoot(root string) (string, error) {
	if root == "" {
		return "", nil
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("serve: weights root: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("serve: weights root %s is not a folder", root)
	}
	return abs, nil
}

// confine returns path with every symlink resolved when it lies inside the
// weights root (root itself included), else errOutsideRoot: a path with a
// '..' element, one that does not exist, one that resolves outside root, or
// a folder with a symlink that does. Without a root, path is returned as is.
func (s *Server) confine(path string) (string, error) {
	if s.root == "" {
		return path, nil
	}
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return "", errOutsideRoot
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil || !within(s.root, abs) {
		return "", errOutsideRoot
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return "", errOutsideRoot
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		if to, err := filepath.EvalSymlinks(filepath.Join(abs, e.Name())); err != nil || !within(s.root, to) {
			return "", errOutsideRoot
		}
	}
	return abs, nil
}

// within reports whether path is root or lies under it (both absolute and
// clean).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// CheckExposure refuses to serve host, off loopback, without an API key
// (unless allowUnauthenticated, then said in warning) or without a weights
// root: anyone who reaches the port could sample and swap the weights. The
// errors and the warning name the flags of mathrl serve.
func CheckExposure(host, apiKey, weightsRoot string, allowUnauthenticated bool) (warning string, err error) {
	if IsLoopback(host) {
		return "", nil
	}
	switch {
	case apiKey == "" && !allowUnauthenticated:
		return "", fmt.Errorf("serve: --host %q is not loopback, so anyone who reaches the port could sample and swap the weights: "+
			"set --api-key (or $%s), or pass --allow-unauthenticated", host, engine.APIKeyEnv)
	case weightsRoot == "":
		return "", fmt.Errorf("serve: --host %q is not loopback: set --weights-root to the run's weights_dir, so that "+
			"/update_weights_from_disk loads nothing from outside it", host)
	case apiKey == "":
		return fmt.Sprintf("--allow-unauthenticated: serving %q WITHOUT AN API KEY; anyone who reaches the port "+
			"can sample and load weights from %s", host, weightsRoot), nil
	}
	return "", nil
}

// IsLoopback reports whether host (an IP address or a name, as --host takes
// it) listens on loopback only: localhost, 127.0.0.0/8 or ::1. An empty host
// or 0.0.0.0 listens on every interface, and any other name is taken to be
// reachable from the network.
func IsLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
