package qwen3

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/internal/atomicfile"
)

// TensorInfo describes one tensor of a safetensors file.
type TensorInfo struct {
	Name  string
	DType string // safetensors dtype: "BF16", "F16" or "F32"
	Shape []int
	file  string
	begin int64 // absolute offset of the data in file
	end   int64
}

// Checkpoint is a set of safetensors files opened lazily: only the headers are
// read when it is opened, and each tensor's bytes are read when asked for,
// straight into the tensor when stored in the compute dtype and otherwise
// through one reused buffer, so a large checkpoint is never held in memory as
// a whole.
// It is not safe for concurrent use.
type Checkpoint struct {
	tensors map[string]TensorInfo
	files   map[string]*os.File
	raw     []byte // the bytes of the tensor being read, reused
}

// OpenCheckpoint opens dir/model.safetensors, or the shards listed in
// dir/model.safetensors.index.json.
func OpenCheckpoint(dir string) (*Checkpoint, error) {
	c := &Checkpoint{tensors: map[string]TensorInfo{}, files: map[string]*os.File{}}
	index := filepath.Join(dir, "model.safetensors.index.json")
	var files []string
	var weightMap map[string]string
	if data, err := os.ReadFile(index); err == nil {
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(data, &idx); err != nil {
			return nil, fmt.Errorf("qwen3: %s: %w", index, err)
		}
		if len(idx.WeightMap) == 0 {
			return nil, fmt.Errorf("qwen3: %s: field \"weight_map\": empty or missing", index)
		}
		seen := map[string]bool{}
		for _, f := range idx.WeightMap {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
		sort.Strings(files)
		weightMap = idx.WeightMap
	} else if errors.Is(err, os.ErrNotExist) {
		files = []string{"model.safetensors"}
	} else {
		return nil, fmt.Errorf("qwen3: %w", err)
	}
	for _, f := range files {
		if strings.Contains(f, "/") || strings.Contains(f, `\`) {
			return nil, fmt.Errorf("qwen3: %s: shard name %q must be a plain file name", index, f)
		}
		path := filepath.Join(dir, f)
		infos, file, err := readHeader(path)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.files[path] = file
		for _, info := range infos {
			if prev, dup := c.tensors[info.Name]; dup {
				c.Close()
				return nil, fmt.Errorf("qwen3: tensor %q is in both %s and %s", info.Name, prev.file, path)
			}
			c.tensors[info.Name] = info
		}
	}
	for name, f := range weightMap {
		if info, ok := c.tensors[name]; !ok || filepath.Base(info.file) != f {
			c.Close()
			return nil, fmt.Errorf("qwen3: %s: tensor %q is not in shard %s", index, name, f)
		}
	}
	return c, nil
}

// OpenSafetensors opens one safetensors file of any tensor names (an
// optimizer state, say), checking its header as OpenCheckpoint does.
func OpenSafetensors(path string) (*Checkpoint, error) {
	infos, file, err := readHeader(path)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{tensors: map[string]TensorInfo{}, files: map[string]*os.File{path: file}}
	for _, info := range infos {
		c.tensors[info.Name] = info
	}
	return c, nil
}

// readHeader opens path and parses its safetensors header (see parseHeader).
func readHeader(path string) ([]TensorInfo, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("qwen3: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("qwen3: %w", err)
	}
	infos, err := parseHeader(path, f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return infos, f, nil
}

// maxHeader bounds the JSON header of a safetensors file (the format's own
// limit is 100 MB).
const maxHeader = 100 << 20

// parseHeader reads the header of the safetensors file r of size bytes, named
// path in errors, and checks every tensor in name order: a supported dtype, a
// shape whose bytes fit the file, data_offsets that hold exactly those bytes
// inside the data buffer, and no two tensors' bytes overlapping. The infos are
// sorted by name.
func parseHeader(path string, r io.ReaderAt, size int64) ([]TensorInfo, error) {
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("qwen3: %s: header length: %w", path, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxHeader || int64(n) > size-8 {
		return nil, fmt.Errorf("qwen3: %s: header length %d does not fit a %d-byte file", path, n, size)
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("qwen3: %s: header: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("qwen3: %s: header: %w", path, err)
	}
	dataStart := int64(8 + n)
	var infos []TensorInfo
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if name == "__metadata__" {
			continue
		}
		info, err := parseTensorInfo(raw[name], size-dataStart)
		if err != nil {
			return nil, fmt.Errorf("qwen3: %s: tensor %q: %w", path, name, err)
		}
		info.Name, info.file, info.begin, info.end = name, path, dataStart+info.begin, dataStart+info.end
		infos = append(infos, info)
	}
	return infos, checkOverlaps(path, infos)
}

// parseTensorInfo decodes one tensor's entry of a header, checking it against
// a data buffer of dataSize bytes; begin and end are relative to the buffer.
func parseTensorInfo(msg json.RawMessage, dataSize int64) (TensorInfo, error) {
	var e struct {
		DType   string  `json:"dtype"`
		Shape   []int   `json:"shape"`
		Offsets []int64 `json:"data_offsets"`
	}
	if err := json.Unmarshal(msg, &e); err != nil {
		return TensorInfo{}, err
	}
	size, ok := dtypeSize[e.DType]
	if !ok {
		return TensorInfo{}, fmt.Errorf("dtype %q not supported (BF16, F16, F32)", e.DType)
	}
	nbytes := size // the tensor's size in bytes, kept under dataSize so that it cannot overflow
	for _, d := range e.Shape {
		if d < 0 {
			return TensorInfo{}, fmt.Errorf("negative dimension in shape %v", e.Shape)
		}
		if d > 0 && nbytes > dataSize/int64(d) {
			return TensorInfo{}, fmt.Errorf("%s%v does not fit the %d-byte data buffer", e.DType, e.Shape, dataSize)
		}
		nbytes *= int64(d)
	}
	if len(e.Offsets) != 2 || e.Offsets[0] < 0 || e.Offsets[0] > e.Offsets[1] || e.Offsets[1] > dataSize ||
		e.Offsets[1]-e.Offsets[0] != nbytes {
		return TensorInfo{}, fmt.Errorf("data_offsets %v do not hold %s%v in a %d-byte data buffer",
			e.Offsets, e.DType, e.Shape, dataSize)
	}
	return TensorInfo{DType: e.DType, Shape: e.Shape, begin: e.Offsets[0], end: e.Offsets[1]}, nil
}

// checkOverlaps returns an error naming two tensors whose bytes overlap.
func checkOverlaps(path string, infos []TensorInfo) error {
	byBegin := slices.Clone(infos)
	slices.SortFunc(byBegin, func(a, b TensorInfo) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end), strings.Compare(a.Name, b.Name))
	})
	var last TensorInfo // the tensor seen so far that ends last
	for _, info := range byBegin {
		if info.begin == info.end {
			continue
		}
		if info.begin < last.end {
			return fmt.Errorf("qwen3: %s: tensors %q and %q overlap", path, last.Name, info.Name)
		}
		last = info
	}
	return nil
}

var dtypeSize = map[string]int64{"BF16": 2, "F16": 2, "F32": 4}

// Names returns the names of all tensors, sorted.
func (c *Checkpoint) Names() []string {
	names := make([]string, 0, len(c.tensors))
	for n := range c.tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Info returns the description of a tensor.
func (c *Checkpoint) Info(name string) (TensorInfo, bool) {
	info, ok := c.tensors[name]
	return info, ok
}

// Read reads one tensor and converts it to dtype (Float32 or BFloat16).
func (c *Checkpoint) Read(name string, dtype dtypes.DType) (*tensors.Tensor, error) {
	info, ok := c.tensors[name]
	if !ok {
		return nil, fmt.Errorf("qwen3: tensor %q not in checkpoint", name)
	}
	t := tensors.FromShape(shapes.Make(dtype, info.Shape...))
	if littleEndian && (info.DType == "BF16" && dtype == dtypes.BFloat16 || info.DType == "F32" && dtype == dtypes.Float32) {
		// Stored as computed: read straight into the tensor.
		var err error
		if e := t.MutableBytes(func(data []byte) {
			if int64(len(data)) != info.end-info.begin {
				err = fmt.Errorf("%d bytes stored for %d", info.end-info.begin, len(data))
				return
			}
			_, err = c.files[info.file].ReadAt(data, info.begin)
		}); e != nil {
			err = e
		}
		if err != nil {
			return nil, fmt.Errorf("qwen3: %s: tensor %q: %w", info.file, name, err)
		}
		return t, nil
	}
	c.raw = slices.Grow(c.raw[:0], int(info.end-info.begin))[:info.end-info.begin]
	raw := c.raw
	if _, err := c.files[info.file].ReadAt(raw, info.begin); err != nil {
		return nil, fmt.Errorf("qwen3: %s: tensor %q: %w", info.file, name, err)
	}
	var err error
	switch dtype {
	case dtypes.Float32:
		tensors.MustMutableFlatData(t, func(flat []float32) { err = decodeFloat32(raw, info.DType, flat) })
	case dtypes.BFloat16:
		tensors.MustMutableFlatData(t, func(flat []bfloat16.BFloat16) {
			if info.DType == "BF16" {
				for i := range flat {
					flat[i] = bfloat16.FromBits(binary.LittleEndian.Uint16(raw[2*i:]))
				}
				return
			}
			tmp := make([]float32, len(flat))
			if err = decodeFloat32(raw, info.DType, tmp); err == nil {
				for i, v := range tmp {
					flat[i] = toBF16(v)
				}
			}
		})
	default:
		return nil, fmt.Errorf("qwen3: tensor %q: cannot convert to %s (Float32 or BFloat16)", name, dtype)
	}
	if err != nil {
		return nil, fmt.Errorf("qwen3: tensor %q: %w", name, err)
	}
	return t, nil
}

// littleEndian reports whether this machine stores numbers as safetensors does.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// Close closes the files.
func (c *Checkpoint) Close() error {
	var first error
	for _, f := range c.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.files = map[string]*os.File{}
	c.raw = nil
	return first
}

func decodeFloat32(raw []byte, dtype string, out []float32) error {
	switch dtype {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	case "F16":
		for i := range out {
			out[i] = float16ToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	default:
		return fmt.Errorf("dtype %q not supported", dtype)
	}
	return nil
}

// float16ToFloat32 converts IEEE 754 half precision bits to float32.
func float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: mant * 2^-24
		v := float32(mant) * float32(math.Ldexp(1, -24))
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// float32ToFloat16 converts to IEEE 754 half precision, rounding to nearest even.
func float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is still correct
	}
	return sign | uint16(half)
}

// float32ToBF16 rounds to nearest even, as PyTorch does, keeping NaN a NaN.
// (GoMLX's bfloat16.FromFloat32 truncates instead.)
func float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// toBF16 rounds f to the nearest bfloat16.
func toBF16(f float32) bfloat16.BFloat16 { return bfloat16.FromBits(float32ToBF16(f)) }

// WriteTensor is one tensor to write: its name, shape, and a function that
// returns its values as float32 (called once, while writing).
type WriteTensor struct {
	Name   string
	Shape  []int
	Values func() ([]float32, error)
}

// writeChunk is the number of values WriteSafetensors encodes at a time.
const writeChunk = 1 << 20

// encoders write float32 values as the bytes of a safetensors dtype.
var encoders = map[string]func(buf []byte, vals []float32){
	"F32": func(buf []byte, vals []float32) {
		for i, v := range vals {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
	},
	"BF16": func(buf []byte, vals []float32) {
		for i, v := range vals {
			binary.LittleEndian.PutUint16(buf[2*i:], float32ToBF16(v))
		}
	},
	"F16": func(buf []byte, vals []float32) {
		for i, v := range vals {
			binary.LittleEndian.PutUint16(buf[2*i:], float32ToFloat16(v))
		}
	},
}

// WriteSafetensors writes tensors to path in one safetensors file with values
// stored as dtype ("BF16", "F16" or "F32"). The header is written first (sizes
// come from the shapes) and each tensor is fetched and written in turn, so only
// one tensor is held at a time. The file appears whole or not at all.
func WriteSafetensors(path, dtype string, list []WriteTensor) error {
	size, ok := dtypeSize[dtype]
	if !ok {
		return fmt.Errorf("qwen3: write %s: dtype %q not supported (BF16, F16, F32)", path, dtype)
	}
	encode := encoders[dtype]
	buf := make([]byte, writeChunk*size)
	sorted := append([]WriteTensor(nil), list...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var offset int64
	for i, t := range sorted {
		if i > 0 && sorted[i-1].Name == t.Name {
			return fmt.Errorf("qwen3: write %s: tensor %q twice", path, t.Name)
		}
		n := int64(1)
		for _, d := range t.Shape {
			n *= int64(d)
		}
		header[t.Name] = map[string]any{"dtype": dtype, "shape": t.Shape, "data_offsets": []int64{offset, offset + n*size}}
		offset += n * size
	}
	hdr, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("qwen3: write %s: %w", path, err)
	}
	for len(hdr)%8 != 0 { // the format pads the header with spaces to 8 bytes
		hdr = append(hdr, ' ')
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		var lenBuf [8]byte
		binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hdr)))
		if _, err := w.Write(lenBuf[:]); err != nil {
			return err
		}
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		for _, t := range sorted {
			vals, err := t.Values()
			if err != nil {
				return fmt.Errorf("qwen3: write %s: tensor %q: %w", path, t.Name, err)
			}
			n := 1
			for _, d := range t.Shape {
				n *= d
			}
			if len(vals) != n {
				return fmt.Errorf("qwen3: write %s: tensor %q: %d values for shape %v", path, t.Name, len(vals), t.Shape)
			}
			for start := 0; start < n; start += writeChunk { // one reused buffer, not a second copy of the tensor
				part := vals[start:min(start+writeChunk, n)]
				encode(buf, part)
				if _, err := w.Write(buf[:int64(len(part))*size]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
