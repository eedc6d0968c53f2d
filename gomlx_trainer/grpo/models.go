package grpo

import (
	"slices"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TinyModelNames returns the accepted values of tiny_model: qwen3's built-in shapes.
func TinyModelNames() []string { return qwen3.ConfigNames() }

func validTinyModel(name string) bool { return slices.Contains(qwen3.ConfigNames(), name) }
