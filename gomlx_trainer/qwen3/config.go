package qwen3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Config is the architecture of a Qwen3 model, as read from a Hugging Face
// config.json. Only dense Qwen3 models with full attention and default RoPE are
// supported; anything else is an error from ParseConfig.
type Config struct {
	VocabSize         int     `json:"vocab_size"`              // number of token ids
	Hidden            int     `json:"hidden_size"`             // model width
	Intermediate      int     `json:"intermediate_size"`       // SwiGLU width
	Layers            int     `json:"num_hidden_layers"`       // decoder layers
	Heads             int     `json:"num_attention_heads"`     // query heads
	KVHeads           int     `json:"num_key_value_heads"`     // key/value heads (grouped-query attention)
	HeadDim           int     `json:"head_dim"`                // width of one head
	RMSNormEps        float64 `json:"rms_norm_eps"`            // epsilon of every RMSNorm
	RopeTheta         float64 `json:"rope_theta"`              // RoPE base frequency
	TieEmbeddings     bool    `json:"tie_word_embeddings"`     // lm_head shares model.embed_tokens.weight
	MaxPositions      int     `json:"max_position_embeddings"` // longest sequence the model was trained for
	BOSTokenID        int     `json:"bos_token_id"`            // beginning of sequence id (informative)
	EOSTokenIDs       []int   `json:"eos_token_id"`            // ids that end generation by default
	DType             string  `json:"torch_dtype"`             // dtype of the stored weights ("bfloat16", "float32", ...)
	TransformersModel string  `json:"model_type"`              // always "qwen3"

	// RopeBF16 rounds RoPE's inverse frequencies to bfloat16, as transformers
	// 5.17 with torch 2.11 did for a model loaded in bfloat16 (the frequencies
	// lived in a buffer of the model's dtype); the tiny reference checkpoint's
	// stored reference.json was computed so. transformers 5.23 with torch 2.15,
	// SGLang and vLLM keep them in float32 whatever the weights' dtype, and so
	// does mathrl: nothing sets this but a test that checks the stored reference.
	RopeBF16 bool `json:"-"`
}

// rawConfig mirrors config.json with the fields that can take several forms.
type rawConfig struct {
	Architectures        []string         `json:"architectures"`
	ModelType            string           `json:"model_type"`
	VocabSize            *int             `json:"vocab_size"`
	HiddenSize           *int             `json:"hidden_size"`
	IntermediateSize     *int             `json:"intermediate_size"`
	NumHiddenLayers      *int             `json:"num_hidden_layers"`
	NumAttentionHeads    *int             `json:"num_attention_heads"`
	NumKeyValueHeads     *int             `json:"num_key_value_heads"`
	HeadDim              *int             `json:"head_dim"`
	RMSNormEps           *float64         `json:"rms_norm_eps"`
	RopeTheta            *float64         `json:"rope_theta"`
	RopeScaling          json.RawMessage  `json:"rope_scaling"`
	RopeParameters       *json.RawMessage `json:"rope_parameters"`
	TieWordEmbeddings    *bool            `json:"tie_word_embeddings"`
	MaxPositionEmbedding *int             `json:"max_position_embeddings"`
	BOSTokenID           *int             `json:"bos_token_id"`
	EOSTokenID           json.RawMessage  `json:"eos_token_id"`
	TorchDType           string           `json:"torch_dtype"`
	DType                string           `json:"dtype"`
	HiddenAct            string           `json:"hidden_act"`
	AttentionBias        bool             `json:"attention_bias"`
	UseSlidingWindow     bool             `json:"use_sliding_window"`
	LayerTypes           []string         `json:"layer_types"`
	NumExperts           int              `json:"num_experts"`
}

// LoadConfig reads dir/config.json (or the file itself when path names a file).
func LoadConfig(path string) (Config, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("qwen3: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig parses a Hugging Face Qwen3 config.json. RoPE's base comes from a
// top-level rope_theta or from transformers-5 rope_parameters; head_dim defaults
// to hidden_size / num_attention_heads. Sliding-window attention, mixtures of
// experts, attention biases, scaled RoPE and other activations are errors.
func ParseConfig(data []byte) (Config, error) {
	var raw rawConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return Config{}, fmt.Errorf("qwen3: config: %w", err)
	}
	fail := func(field, format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("qwen3: config field %q: %s", field, fmt.Sprintf(format, args...))
	}
	if raw.ModelType != "qwen3" {
		return fail("model_type", "%q is not supported (only dense \"qwen3\")", raw.ModelType)
	}
	if raw.NumExperts > 0 {
		return fail("num_experts", "mixture-of-experts models are not supported")
	}
	if raw.UseSlidingWindow {
		return fail("use_sliding_window", "sliding-window attention is not supported")
	}
	for i, lt := range raw.LayerTypes {
		if lt != "full_attention" {
			return fail("layer_types", "layer %d is %q; only \"full_attention\" is supported", i, lt)
		}
	}
	if raw.AttentionBias {
		return fail("attention_bias", "attention biases are not supported (Qwen3 has none)")
	}
	if raw.HiddenAct != "" && raw.HiddenAct != "silu" {
		return fail("hidden_act", "%q is not supported (only \"silu\")", raw.HiddenAct)
	}
	var cfg Config
	cfg.TransformersModel = raw.ModelType
	for _, f := range []struct {
		name string
		src  *int
		dst  *int
	}{
		{"vocab_size", raw.VocabSize, &cfg.VocabSize},
		{"hidden_size", raw.HiddenSize, &cfg.Hidden},
		{"intermediate_size", raw.IntermediateSize, &cfg.Intermediate},
		{"num_hidden_layers", raw.NumHiddenLayers, &cfg.Layers},
		{"num_attention_heads", raw.NumAttentionHeads, &cfg.Heads},
	} {
		if f.src == nil {
			return fail(f.name, "missing")
		}
		*f.dst = *f.src
	}
	cfg.KVHeads = cfg.Heads
	if raw.NumKeyValueHeads != nil {
		cfg.KVHeads = *raw.NumKeyValueHeads
	}
	if raw.HeadDim != nil {
		cfg.HeadDim = *raw.HeadDim
	} else if cfg.Heads > 0 {
		cfg.HeadDim = cfg.Hidden / cfg.Heads
	}
	cfg.RMSNormEps = 1e-6
	if raw.RMSNormEps != nil {
		cfg.RMSNormEps = *raw.RMSNormEps
	}
	theta, err := ropeTheta(raw)
	if err != nil {
		return Config{}, err
	}
	cfg.RopeTheta = theta
	cfg.TieEmbeddings = false // transformers' Qwen3Config default
	if raw.TieWordEmbeddings != nil {
		cfg.TieEmbeddings = *raw.TieWordEmbeddings
	}
	if raw.MaxPositionEmbedding != nil {
		cfg.MaxPositions = *raw.MaxPositionEmbedding
	}
	if raw.BOSTokenID != nil {
		cfg.BOSTokenID = *raw.BOSTokenID
	}
	if ids, err := parseIDs(raw.EOSTokenID); err != nil {
		return fail("eos_token_id", "%v", err)
	} else {
		cfg.EOSTokenIDs = ids
	}
	cfg.DType = raw.TorchDType
	if cfg.DType == "" {
		cfg.DType = raw.DType
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// ropeTheta finds RoPE's base in either config layout and rejects scaled RoPE.
func ropeTheta(raw rawConfig) (float64, error) {
	checkType := func(field string, msg json.RawMessage) (float64, bool, error) {
		if len(msg) == 0 || string(bytes.TrimSpace(msg)) == "null" {
			return 0, false, nil
		}
		var p struct {
			RopeType  string   `json:"rope_type"`
			Type      string   `json:"type"`
			RopeTheta *float64 `json:"rope_theta"`
		}
		if err := json.Unmarshal(msg, &p); err != nil {
			return 0, false, fmt.Errorf("qwen3: config field %q: %w", field, err)
		}
		t := p.RopeType
		if t == "" {
			t = p.Type
		}
		if t != "" && t != "default" {
			return 0, false, fmt.Errorf("qwen3: config field %q: rope type %q is not supported (only \"default\")", field, t)
		}
		if p.RopeTheta == nil {
			return 0, false, nil
		}
		return *p.RopeTheta, true, nil
	}
	if _, _, err := checkType("rope_scaling", raw.RopeScaling); err != nil {
		return 0, err
	}
	if raw.RopeParameters != nil {
		theta, ok, err := checkType("rope_parameters", *raw.RopeParameters)
		if err != nil {
			return 0, err
		}
		if ok {
			return theta, nil
		}
	}
	if raw.RopeTheta != nil {
		return *raw.RopeTheta, nil
	}
	return 0, errors.New("qwen3: config: neither \"rope_theta\" nor \"rope_parameters.rope_theta\" is set")
}

// parseIDs reads a token id field that is absent, null, an integer or a list of integers.
func parseIDs(msg json.RawMessage) ([]int, error) {
	if len(msg) == 0 || string(bytes.TrimSpace(msg)) == "null" {
		return nil, nil
	}
	var one int
	if err := json.Unmarshal(msg, &one); err == nil {
		return []int{one}, nil
	}
	var many []int
	if err := json.Unmarshal(msg, &many); err != nil {
		return nil, fmt.Errorf("want an integer or a list of integers, got %s", msg)
	}
	return many, nil
}

// Validate checks that the sizes are positive and consistent.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"vocab_size", c.VocabSize}, {"hidden_size", c.Hidden}, {"intermediate_size", c.Intermediate},
		{"num_hidden_layers", c.Layers}, {"num_attention_heads", c.Heads},
		{"num_key_value_heads", c.KVHeads}, {"head_dim", c.HeadDim},
	} {
		if f.v <= 0 {
			return fmt.Errorf("qwen3: config field %q: %d, want > 0", f.name, f.v)
		}
	}
	if c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("qwen3: config field \"num_key_value_heads\": %d does not divide num_attention_heads %d", c.KVHeads, c.Heads)
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("qwen3: config field \"head_dim\": %d, want an even number (RoPE rotates pairs)", c.HeadDim)
	}
	if c.RopeTheta <= 0 {
		return fmt.Errorf("qwen3: config field \"rope_theta\": %g, want > 0", c.RopeTheta)
	}
	if c.RMSNormEps <= 0 {
		return fmt.Errorf("qwen3: config field \"rms_norm_eps\": %g, want > 0", c.RMSNormEps)
	}
	for _, id := range c.EOSTokenIDs {
		if id < 0 || id >= c.VocabSize {
			return fmt.Errorf("qwen3: config field \"eos_token_id\": %d outside the vocabulary [0, %d)", id, c.VocabSize)
		}
	}
	return nil
}

// Params returns the number of parameters of the model.
func (c Config) Params() int64 {
	h, l := int64(c.Hidden), int64(c.Layers)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	perLayer := h*q + 2*h*kv + q*h + 3*h*int64(c.Intermediate) + 2*h + 2*int64(c.HeadDim)
	n := int64(c.VocabSize)*h + l*perLayer + h
	if !c.TieEmbeddings {
		n += int64(c.VocabSize) * h
	}
	return n
}

// MarshalHF returns the config.json that transformers reads for this config.
// torch_dtype is left out when DType is empty, as it was in the file parsed.
func (c Config) MarshalHF() ([]byte, error) {
	m := map[string]any{
		"architectures":           []string{"Qwen3ForCausalLM"},
		"model_type":              "qwen3",
		"attention_bias":          false,
		"attention_dropout":       0.0,
		"hidden_act":              "silu",
		"vocab_size":              c.VocabSize,
		"hidden_size":             c.Hidden,
		"intermediate_size":       c.Intermediate,
		"num_hidden_layers":       c.Layers,
		"num_attention_heads":     c.Heads,
		"num_key_value_heads":     c.KVHeads,
		"head_dim":                c.HeadDim,
		"rms_norm_eps":            c.RMSNormEps,
		"rope_theta":              c.RopeTheta,
		"rope_scaling":            nil,
		"tie_word_embeddings":     c.TieEmbeddings,
		"max_position_embeddings": c.MaxPositions,
		"bos_token_id":            c.BOSTokenID,
		"use_sliding_window":      false,
		"sliding_window":          nil,
		"use_cache":               true,
		"initializer_range":       0.02,
	}
	if c.DType != "" {
		m["torch_dtype"] = c.DType
	}
	if len(c.EOSTokenIDs) == 1 {
		m["eos_token_id"] = c.EOSTokenIDs[0]
	} else {
		m["eos_token_id"] = c.EOSTokenIDs
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("qwen3: %w", err)
	}
	return append(out, '\n'), nil
}

// namedConfigs are the shapes `mathrl model init` knows. The tiny ones fit a
// byte-level vocabulary (256 bytes, then Qwen3's special and tool tokens in
// Qwen3's order: <|endoftext|> 256, <|im_start|> 257, <|im_end|> 258, ...; 300
// ids in all) and train on a CPU (tiny-wide-heads has Qwen3-4B's kinds of
// shape: GQA, head_dim wider than hidden/heads, untied embeddings);
// qwen3-0.6b-4l is Qwen3-0.6B's width and vocabulary with 4 layers, in float32
// (the shape `mathrl bench` compares with PyTorch on a CPU: the matmuls, the
// head's above all, dominate); the others are the shapes of the released Qwen3
// models.
var namedConfigs = map[string]Config{
	"tiny": {VocabSize: 300, Hidden: 64, Intermediate: 160, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16,
		RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: true, MaxPositions: 2048, BOSTokenID: 256,
		EOSTokenIDs: []int{258}, DType: "float32"},
	"tiny-4l": {VocabSize: 300, Hidden: 128, Intermediate: 384, Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 32,
		RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: true, MaxPositions: 2048, BOSTokenID: 256,
		EOSTokenIDs: []int{258}, DType: "float32"},
	"small": {VocabSize: 300, Hidden: 256, Intermediate: 768, Layers: 6, Heads: 8, KVHeads: 4, HeadDim: 32,
		RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: true, MaxPositions: 4096, BOSTokenID: 256,
		EOSTokenIDs: []int{258}, DType: "float32"},
	"tiny-wide-heads": {VocabSize: 300, Hidden: 64, Intermediate: 160, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 24,
		RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: false, MaxPositions: 2048, BOSTokenID: 256,
		EOSTokenIDs: []int{258}, DType: "float32"},
	"qwen3-0.6b": {VocabSize: 151936, Hidden: 1024, Intermediate: 3072, Layers: 28, Heads: 16, KVHeads: 8,
		HeadDim: 128, RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, MaxPositions: 40960,
		BOSTokenID: 151643, EOSTokenIDs: []int{151645}, DType: "bfloat16"},
	"qwen3-0.6b-4l": {VocabSize: 151936, Hidden: 1024, Intermediate: 3072, Layers: 4, Heads: 16, KVHeads: 8,
		HeadDim: 128, RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, MaxPositions: 40960,
		BOSTokenID: 151643, EOSTokenIDs: []int{151645}, DType: "float32"},
	"qwen3-1.7b": {VocabSize: 151936, Hidden: 2048, Intermediate: 6144, Layers: 28, Heads: 16, KVHeads: 8,
		HeadDim: 128, RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, MaxPositions: 40960,
		BOSTokenID: 151643, EOSTokenIDs: []int{151645}, DType: "bfloat16"},
	"qwen3-4b": {VocabSize: 151936, Hidden: 2560, Intermediate: 9728, Layers: 36, Heads: 32, KVHeads: 8,
		HeadDim: 128, RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, MaxPositions: 40960,
		BOSTokenID: 151643, EOSTokenIDs: []int{151645}, DType: "bfloat16"},
	"qwen3-8b": {VocabSize: 151936, Hidden: 4096, Intermediate: 12288, Layers: 36, Heads: 32, KVHeads: 8,
		HeadDim: 128, RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: false, MaxPositions: 40960,
		BOSTokenID: 151643, EOSTokenIDs: []int{151645}, DType: "bfloat16"},
}

// NamedConfig returns one of the built-in shapes (see ConfigNames).
func NamedConfig(name string) (Config, error) {
	c, ok := namedConfigs[strings.ToLower(name)]
	if !ok {
		return Config{}, fmt.Errorf("qwen3: unknown config %q (known: %s)", name, strings.Join(ConfigNames(), ", "))
	}
	c.TransformersModel = "qwen3"
	c.EOSTokenIDs = append([]int(nil), c.EOSTokenIDs...)
	return c, nil
}

// ConfigNames lists the built-in shapes, sorted.
func ConfigNames() []string {
	names := make([]string, 0, len(namedConfigs))
	for n := range namedConfigs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
