package qwen3

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/ml/model"
)

// VariablePath maps a Hugging Face tensor name to the path of the GoMLX
// model.Store variable that holds it: "model.layers.3.mlp.up_proj.weight" is
// the variable "/model/layers/3/mlp/up_proj/weight".
func VariablePath(tensor string) string {
	return model.ScopeSeparator + strings.ReplaceAll(tensor, ".", model.ScopeSeparator)
}

// TensorName is the inverse of VariablePath.
func TensorName(path string) string {
	return strings.ReplaceAll(strings.TrimPrefix(path, model.ScopeSeparator), model.ScopeSeparator, ".")
}

// TensorSpec is one weight of the model: its Hugging Face name and shape.
type TensorSpec struct {
	Name  string
	Shape []int
}

// Tensors lists every weight of a model with this config, in a stable order, with
// the shapes transformers uses (linear layers are [out, in]).
func (c Config) Tensors() []TensorSpec {
	h, q, kv := c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	specs := []TensorSpec{{"model.embed_tokens.weight", []int{c.VocabSize, h}}}
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		specs = append(specs,
			TensorSpec{p + "input_layernorm.weight", []int{h}},
			TensorSpec{p + "self_attn.q_proj.weight", []int{q, h}},
			TensorSpec{p + "self_attn.k_proj.weight", []int{kv, h}},
			TensorSpec{p + "self_attn.v_proj.weight", []int{kv, h}},
			TensorSpec{p + "self_attn.o_proj.weight", []int{h, q}},
			TensorSpec{p + "self_attn.q_norm.weight", []int{c.HeadDim}},
			TensorSpec{p + "self_attn.k_norm.weight", []int{c.HeadDim}},
			TensorSpec{p + "post_attention_layernorm.weight", []int{h}},
			TensorSpec{p + "mlp.gate_proj.weight", []int{c.Intermediate, h}},
			TensorSpec{p + "mlp.up_proj.weight", []int{c.Intermediate, h}},
			TensorSpec{p + "mlp.down_proj.weight", []int{h, c.Intermediate}},
		)
	}
	specs = append(specs, TensorSpec{"model.norm.weight", []int{h}})
	if !c.TieEmbeddings {
		specs = append(specs, TensorSpec{"lm_head.weight", []int{c.VocabSize, h}})
	}
	return specs
}
