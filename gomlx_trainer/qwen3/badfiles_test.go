package qwen3

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// safetensorsFile returns a safetensors file: the header's length as 8
// little-endian bytes, the header, then dataLen zero bytes.
func safetensorsFile(header string, dataLen int) []byte {
	return append(lengthThen(uint64(len(header)), header), make([]byte, dataLen)...)
}

// lengthThen returns n as 8 little-endian bytes followed by rest.
func lengthThen(n uint64, rest string) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, n), rest...)
}

// badSafetensors are malformed files and what the one error must say.
var badSafetensors = []struct {
	name string
	file []byte
	want []string
}{
	{"empty file", nil, []string{"header length"}},
	{"truncated length", []byte{8, 0, 0}, []string{"header length"}},
	{"header longer than the file", lengthThen(1000, `{}`), []string{"header length 1000", "10-byte file"}},
	{"header length near 2^64", lengthThen(1<<64-8, `{}`), []string{"header length 18446744073709551608"}},
	{"truncated header", safetensorsFile(`{"a":{"dtype":"F32"`, 0), []string{"header", "unexpected end"}},
	{"header not an object", safetensorsFile(`[1,2]`, 0), []string{"header", "cannot unmarshal array"}},
	{"tensor not an object", safetensorsFile(`{"w":7}`, 0), []string{`tensor "w"`}},
	{"unsupported dtype", safetensorsFile(`{"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, 8), []string{`tensor "w"`, `dtype "I64"`}},
	{"negative dimension", safetensorsFile(`{"w":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,4]}}`, 4), []string{`tensor "w"`, "negative dimension"}},
	{"shape larger than the file", safetensorsFile(`{"w":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,0]}}`, 0),
		[]string{`tensor "w"`, "does not fit"}},
	{"shape whose size wraps to 0", safetensorsFile(`{"w":{"dtype":"BF16","shape":[4294967296,2147483648],"data_offsets":[0,0]}}`, 0),
		[]string{`tensor "w"`, "does not fit"}},
	{"one offset", safetensorsFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[4]}}`, 4), []string{`tensor "w"`, "data_offsets [4]"}},
	{"no offsets", safetensorsFile(`{"w":{"dtype":"F32","shape":[1]}}`, 4), []string{`tensor "w"`, "data_offsets []"}},
	{"negative begin", safetensorsFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}`, 4), []string{`tensor "w"`, "data_offsets [-4 0]"}},
	{"end before begin", safetensorsFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[9223372036854775804,-9223372036854775808]}}`, 4),
		[]string{`tensor "w"`, "data_offsets"}},
	{"end past the file", safetensorsFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), []string{`tensor "w"`, "4-byte data buffer"}},
	{"end near 2^63", safetensorsFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[9223372036854775803,9223372036854775807]}}`, 4),
		[]string{`tensor "w"`, "data_offsets"}},
	{"size not the shape's", safetensorsFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 8), []string{`tensor "w"`, "F32[2]"}},
	{"offsets not numbers", safetensorsFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":["0","4"]}}`, 4), []string{`tensor "w"`, "string"}},
	{"shape not integers", safetensorsFile(`{"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`, 4), []string{`tensor "w"`, "shape"}},
	{"overlapping tensors", safetensorsFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 12),
		[]string{`"a" and "b" overlap`}},
	{"two tensors on the same bytes", safetensorsFile(`{"b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4),
		[]string{`"a" and "b" overlap`}},
	{"first bad tensor in name order", safetensorsFile(`{"z":{"dtype":"I8"},"m":{"dtype":"F32","shape":[1],"data_offsets":[0,5]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4),
		[]string{`tensor "m"`}},
}

// TestBadSafetensors checks that each malformed file gives one error that
// names the file and, where one is at fault, the tensor; and no panic.
func TestBadSafetensors(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range badSafetensors {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".safetensors")
			if err := os.WriteFile(path, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := OpenSafetensors(path)
			if err == nil {
				c.Close()
				t.Fatalf("case %d: no error", i)
			}
			if !strings.HasPrefix(err.Error(), "qwen3: "+path+": ") {
				t.Errorf("error %q does not start with qwen3: %s:", err, path)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// FuzzSafetensorsHeader checks that parseHeader never panics, and that what
// it accepts is readable: every tensor's bytes lie inside the file, hold
// exactly its shape in its dtype, and overlap no other tensor's.
func FuzzSafetensorsHeader(f *testing.F) {
	for _, tc := range badSafetensors {
		f.Add(tc.file)
	}
	f.Add(safetensorsFile(`{"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2,1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[],"data_offsets":[4,8]}}`, 8))
	f.Add(safetensorsFile(`{"a":{"dtype":"BF16","shape":[0,3],"data_offsets":[2,2]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}`, 2))
	f.Fuzz(func(t *testing.T, file []byte) {
		infos, err := parseHeader("f", bytes.NewReader(file), int64(len(file)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "qwen3: f: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		used := make([]bool, len(file))
		for _, info := range infos {
			n := dtypeSize[info.DType]
			for _, d := range info.Shape {
				n *= int64(d)
			}
			if info.begin < 8 || info.end > int64(len(file)) || info.end-info.begin != n {
				t.Fatalf("tensor %q: bytes [%d, %d) of %d for %s%v", info.Name, info.begin, info.end, len(file), info.DType, info.Shape)
			}
			for i := info.begin; i < info.end; i++ {
				if used[i] {
					t.Fatalf("tensor %q: byte %d is another tensor's", info.Name, i)
				}
				used[i] = true
			}
		}
	})
}
