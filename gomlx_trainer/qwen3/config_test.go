package qwen3

import (
	"reflect"
	"strings"
	"testing"
)

const tinyConfig = `{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","vocab_size":1024,"hidden_size":64,
"intermediate_size":160,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,
"rms_norm_eps":1e-06,"rope_parameters":{"rope_theta":1000000.0,"rope_type":"default"},"sliding_window":null,
"use_sliding_window":false,"tie_word_embeddings":true,"eos_token_id":2,"bos_token_id":1,"dtype":"bfloat16",
"layer_types":["full_attention","full_attention"],"hidden_act":"silu","attention_bias":false}`

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(tinyConfig))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RopeTheta != 1e6 || cfg.HeadDim != 16 || cfg.KVHeads != 2 || !cfg.TieEmbeddings || cfg.RopeBF16 ||
		len(cfg.EOSTokenIDs) != 1 || cfg.EOSTokenIDs[0] != 2 {
		t.Errorf("parsed %+v", cfg)
	}
	// The older layout: top-level rope_theta, no head_dim, eos list, float32.
	old := `{"model_type":"qwen3","vocab_size":100,"hidden_size":32,"intermediate_size":64,"num_hidden_layers":1,
	"num_attention_heads":4,"rope_theta":10000,"rope_scaling":null,"eos_token_id":[5,6],"torch_dtype":"float32",
	"tie_word_embeddings":false}`
	cfg, err = ParseConfig([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RopeTheta != 10000 || cfg.HeadDim != 8 || cfg.KVHeads != 4 || cfg.TieEmbeddings || cfg.RopeBF16 ||
		len(cfg.EOSTokenIDs) != 2 {
		t.Errorf("parsed %+v", cfg)
	}
	// Without tie_word_embeddings the embeddings are untied, as in
	// transformers' Qwen3Config (TestConfigWithoutTieMatchesTransformersLive).
	cfg, err = ParseConfig([]byte(strings.Replace(old, `"tie_word_embeddings":false`, `"attention_bias":false`, 1)))
	if err != nil || cfg.TieEmbeddings {
		t.Errorf("no tie_word_embeddings: tied %v, %v; want untied", cfg.TieEmbeddings, err)
	}
	cfg, _ = ParseConfig([]byte(old))
	// MarshalHF then ParseConfig gives the same config back.
	data, err := cfg.MarshalHF()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Hidden != cfg.Hidden || back.RopeTheta != cfg.RopeTheta || back.TieEmbeddings != cfg.TieEmbeddings ||
		back.HeadDim != cfg.HeadDim || len(back.EOSTokenIDs) != 2 {
		t.Errorf("round trip: %+v, want %+v", back, cfg)
	}
}

func TestParseConfigRejects(t *testing.T) {
	for _, tc := range []struct{ name, edit, wantField string }{
		{"moe", `"model_type":"qwen3_moe"`, "model_type"},
		{"sliding window", `"use_sliding_window":true`, "use_sliding_window"},
		{"sliding layer", `"layer_types":["full_attention","sliding_attention"]`, "layer_types"},
		{"yarn in rope_parameters", `"rope_parameters":{"rope_theta":1e6,"rope_type":"yarn","factor":4}`, "rope_parameters"},
		{"attention bias", `"attention_bias":true`, "attention_bias"},
		{"gelu", `"hidden_act":"gelu"`, "hidden_act"},
		{"heads not divisible", `"num_key_value_heads":3`, "num_key_value_heads"},
		{"eos outside vocab", `"eos_token_id":5000`, "eos_token_id"},
		{"linear rope_scaling", `"rope_scaling":{"type":"linear","factor":2}`, "rope_scaling"},
		{"missing hidden", `"hidden_size":null`, "hidden_size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.edit[:strings.Index(tc.edit, ":")]
			// Replace the key's value in tinyConfig, or add it.
			cfgText := tinyConfig
			if i := strings.Index(cfgText, key+":"); i >= 0 {
				j := i + len(key) + 1
				depth := 0
				for ; j < len(cfgText); j++ {
					c := cfgText[j]
					if c == '{' || c == '[' {
						depth++
					} else if c == '}' || c == ']' {
						if depth == 0 {
							break
						}
						depth--
					} else if c == ',' && depth == 0 {
						break
					}
				}
				cfgText = cfgText[:i] + tc.edit + cfgText[j:]
			} else {
				cfgText = "{" + tc.edit + "," + cfgText[1:]
			}
			_, err := ParseConfig([]byte(cfgText))
			if err == nil {
				t.Fatalf("no error for %s", cfgText)
			}
			if !strings.Contains(err.Error(), tc.wantField) || !strings.HasPrefix(err.Error(), "qwen3: ") {
				t.Errorf("error %q does not name %q", err, tc.wantField)
			}
		})
	}
}

func TestNamedConfigs(t *testing.T) {
	for _, name := range ConfigNames() {
		cfg, err := NamedConfig(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Parameter counts of the released models (from their model cards; embeddings included).
	for name, want := range map[string]float64{"qwen3-0.6b": 0.6e9, "qwen3-4b": 4.0e9, "qwen3-8b": 8.2e9} {
		cfg, _ := NamedConfig(name)
		if got := float64(cfg.Params()); got < 0.9*want || got > 1.1*want {
			t.Errorf("%s: %.3g parameters, want about %.3g", name, got, want)
		}
	}
	// qwen3-0.6b-4l: Qwen3-0.6B's embeddings (155.6M) and 4 of its 28 layers (15.7M each).
	if cfg, _ := NamedConfig("qwen3-0.6b-4l"); cfg.Params() != 151936*1024+4*15730944+1024 || cfg.RopeBF16 {
		t.Errorf("qwen3-0.6b-4l: %d parameters (RopeBF16 %v), want %d in float32", cfg.Params(), cfg.RopeBF16, 151936*1024+4*15730944+1024)
	}
	if _, err := NamedConfig("qwen3-70b"); err == nil {
		t.Error("unknown config: no error")
	}
}

func TestVariableNames(t *testing.T) {
	for _, tc := range []struct{ tensor, path string }{
		{"model.layers.3.self_attn.q_proj.weight", "/model/layers/3/self_attn/q_proj/weight"},
		{"model.embed_tokens.weight", "/model/embed_tokens/weight"},
		{"lm_head.weight", "/lm_head/weight"},
	} {
		if path := VariablePath(tc.tensor); path != tc.path {
			t.Errorf("VariablePath(%q) = %q, want %q", tc.tensor, path, tc.path)
		}
		if back := TensorName(tc.path); back != tc.tensor {
			t.Errorf("TensorName(%q) = %q, want %q", tc.path, back, tc.tensor)
		}
	}
}

// FuzzParseConfig parses arbitrary config.json files: no panic; an error
// starts "qwen3: config"; an accepted config is valid and comes back the same
// through MarshalHF.
func FuzzParseConfig(f *testing.F) {
	f.Add(tinyConfig)
	f.Add(tinyConfig[:len(tinyConfig)/2])
	for _, edit := range []string{`"rms_norm_eps":NaN`, `"rope_theta":1e400`, `"hidden_size":1e20`, `"eos_token_id":[1,"2"]`,
		`"head_dim":-2`, `"num_key_value_heads":0`, `"rope_parameters":[1]`, "\"model_type\":\"\xff\""} {
		f.Add("{" + edit + "," + tinyConfig[1:])
	}
	f.Fuzz(func(t *testing.T, file string) {
		cfg, err := ParseConfig([]byte(file))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "qwen3: config") {
				t.Fatalf("error %q does not start with qwen3: config", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		data, err := cfg.MarshalHF()
		if err != nil {
			t.Fatalf("MarshalHF: %v", err)
		}
		back, err := ParseConfig(data)
		if err != nil || !reflect.DeepEqual(back, cfg) {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, cfg)
		}
	})
}

// TestHeadDimDefault: without head_dim, a head is hidden_size /
// num_attention_heads wide (transformers' Qwen3Config), however many key
// and value heads share the queries; head_dim, when set, wins.
func TestHeadDimDefault(t *testing.T) {
	for _, tc := range []struct {
		fields string
		want   int
	}{
		{`"num_attention_heads":4`, 8},
		{`"num_attention_heads":4,"num_key_value_heads":2`, 8},
		{`"num_attention_heads":8,"num_key_value_heads":1`, 4},
		{`"num_attention_heads":2,"num_key_value_heads":2`, 16},
		{`"num_attention_heads":4,"num_key_value_heads":2,"head_dim":12`, 12},
	} {
		cfg, err := ParseConfig([]byte(`{"model_type":"qwen3","vocab_size":100,"hidden_size":32,"intermediate_size":64,
		"num_hidden_layers":1,"rope_theta":10000,"eos_token_id":5,` + tc.fields + `}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.fields, err)
		}
		if cfg.HeadDim != tc.want {
			t.Errorf("%s: head_dim %d, want %d", tc.fields, cfg.HeadDim, tc.want)
		}
	}
}
