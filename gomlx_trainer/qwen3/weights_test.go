package qwen3

import (
	"strings"
	"testing"
)

func TestStoredDType(t *testing.T) {
	bf16 := Config{DType: "bfloat16"}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
		err  string
	}{
		{"bf16", Config{}, "BF16", ""},
		{"bfloat16", Config{}, "BF16", ""},
		{"f16", bf16, "F16", ""},
		{"float16", bf16, "F16", ""},
		{"f32", bf16, "F32", ""},
		{"float32", bf16, "F32", ""},
		{"", bf16, "BF16", ""},
		{"", Config{DType: "float16"}, "F16", ""},
		{"", Config{DType: "float32"}, "F32", ""},
		{"", Config{}, "F32", ""},
		{"BF16", Config{}, "", `qwen3: stored dtype "BF16"`},
		{"int8", bf16, "", `qwen3: stored dtype "int8"`},
	} {
		got, err := StoredDType(tc.name, tc.cfg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("StoredDType(%q, %q) err = %v, want %q", tc.name, tc.cfg.DType, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("StoredDType(%q, %q) = %q, %v, want %q", tc.name, tc.cfg.DType, got, err, tc.want)
		}
	}
}
