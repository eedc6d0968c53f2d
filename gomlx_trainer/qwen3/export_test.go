package qwen3

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

// rawSafetensors is a safetensors file read by the rules of the format, apart
// from this package's reader: an 8-byte little-endian header length, a JSON
// header, then a byte buffer that the header's data_offsets must cover exactly.
type rawSafetensors struct {
	headerLen int
	metadata  map[string]string
	tensors   map[string]rawTensor
}

type rawTensor struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
	Data    []byte `json:"-"`
}

func readRawSafetensors(t *testing.T, path string) rawSafetensors {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 8 {
		t.Fatalf("%s: %d bytes, shorter than the header length", path, len(data))
	}
	n := int(binary.LittleEndian.Uint64(data[:8]))
	if 8+n > len(data) {
		t.Fatalf("%s: header length %d past the end of the file", path, n)
	}
	header := data[8 : 8+n]
	if header[0] != '{' {
		t.Fatalf("%s: header does not start with '{'", path)
	}
	if trimmed := bytes.TrimRight(header, " "); !json.Valid(trimmed) {
		t.Fatalf("%s: header is not JSON followed by space padding", path)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(header, &fields); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	out := rawSafetensors{headerLen: n, tensors: map[string]rawTensor{}}
	buf := data[8+n:]
	type span struct{ lo, hi int }
	var spans []span
	for name, raw := range fields {
		if name == "__metadata__" {
			if err := json.Unmarshal(raw, &out.metadata); err != nil {
				t.Fatalf("%s: __metadata__ is not a map of strings: %v", path, err)
			}
			continue
		}
		var ti rawTensor
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ti); err != nil {
			t.Fatalf("%s: tensor %q: %v", path, name, err)
		}
		size := map[string]int{"F32": 4, "BF16": 2, "F16": 2}[ti.DType]
		if size == 0 {
			t.Fatalf("%s: tensor %q: dtype %q", path, name, ti.DType)
		}
		elems := 1
		for _, d := range ti.Shape {
			elems *= d
		}
		lo, hi := ti.Offsets[0], ti.Offsets[1]
		if lo < 0 || hi > len(buf) || hi-lo != elems*size {
			t.Fatalf("%s: tensor %q: offsets [%d, %d] for %d elements of %s in a %d-byte buffer", path, name, lo, hi, elems, ti.DType, len(buf))
		}
		ti.Data = buf[lo:hi]
		spans = append(spans, span{lo, hi})
		out.tensors[name] = ti
	}
	// The buffer must be entirely indexed, without holes or overlaps.
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	end := 0
	for _, s := range spans {
		if s.lo != end {
			t.Fatalf("%s: byte buffer has a hole or an overlap at %d (next tensor starts at %d)", path, end, s.lo)
		}
		end = s.hi
	}
	if end != len(buf) {
		t.Fatalf("%s: byte buffer is %d bytes, tensors cover %d", path, len(buf), end)
	}
	return out
}

// TestExportMatchesTransformersFiles loads the checkpoint that transformers
// wrote, saves it with this package's writer and compares the two folders:
// the safetensors files must hold the same tensors with the same dtypes,
// shapes and bytes, obey the format's rules, carry the "pt" format metadata
// that transformers checks, and config.json must say what transformers' own
// config.json says.
func TestExportMatchesTransformersFiles(t *testing.T) {
	refDir, _ := loadReference(t)
	m, err := Load(refDir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir, "BF16"); err != nil {
		t.Fatal(err)
	}

	want := readRawSafetensors(t, filepath.Join(refDir, "model.safetensors"))
	got := readRawSafetensors(t, filepath.Join(dir, "model.safetensors"))
	if got.metadata["format"] != "pt" {
		t.Errorf("__metadata__ %v, want format pt", got.metadata)
	}
	if got.headerLen%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", got.headerLen)
	}
	if a, b := slices.Sorted(maps.Keys(got.tensors)), slices.Sorted(maps.Keys(want.tensors)); !slices.Equal(a, b) {
		t.Fatalf("tensor names\n got %v\nwant %v", a, b)
	}
	for name, w := range want.tensors {
		g := got.tensors[name]
		if g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) {
			t.Errorf("%s: %s %v, want %s %v", name, g.DType, g.Shape, w.DType, w.Shape)
			continue
		}
		if !bytes.Equal(g.Data, w.Data) {
			t.Errorf("%s: bytes differ from the transformers file", name)
		}
	}

	var wantCfg, gotCfg map[string]any
	for path, cfg := range map[string]*map[string]any{filepath.Join(refDir, "config.json"): &wantCfg, filepath.Join(dir, "config.json"): &gotCfg} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, cfg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	// Keys transformers fills in itself or that only say which version wrote the
	// file; rope_theta is compared apart (transformers 5 nests it).
	skip := map[string]bool{"transformers_version": true, "dtype": true, "layer_types": true,
		"rope_parameters": true, "max_window_layers": true, "pad_token_id": true}
	for key, w := range wantCfg {
		if skip[key] {
			continue
		}
		g, ok := gotCfg[key]
		if !ok {
			t.Errorf("config.json lacks %q (transformers wrote %v)", key, w)
			continue
		}
		if !jsonEqual(g, w) {
			t.Errorf("config.json %q = %v, transformers wrote %v", key, g, w)
		}
	}
	rope, _ := wantCfg["rope_parameters"].(map[string]any)
	if gotCfg["rope_theta"] != rope["rope_theta"] {
		t.Errorf("rope_theta %v, transformers wrote rope_parameters.rope_theta %v", gotCfg["rope_theta"], rope["rope_theta"])
	}
	if gotCfg["torch_dtype"] != wantCfg["dtype"] {
		t.Errorf("torch_dtype %v, transformers wrote dtype %v", gotCfg["torch_dtype"], wantCfg["dtype"])
	}
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
