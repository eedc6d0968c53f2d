package grpo

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mathrl/mathrl/configs"
)

// FlagName is the command-line flag of a config key: "rollout_batch_size" is
// --rollout-batch-size, as in slime.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// BindFlags adds one flag per Config knob to fs, writing into c. Use
// ApplyFlags to copy only the flags the user set over a loaded recipe.
func BindFlags(fs *pflag.FlagSet, c *Config) {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, usage := FlagName(yamlKey(f)), fieldDoc(f)
		switch p := v.Field(i).Addr().Interface().(type) {
		case *string:
			fs.StringVar(p, name, *p, usage)
		case *int:
			fs.IntVar(p, name, *p, usage)
		case *int64:
			fs.Int64Var(p, name, *p, usage)
		case *float64:
			fs.Float64Var(p, name, *p, usage)
		case *bool:
			fs.BoolVar(p, name, *p, usage)
		default:
			panic(fmt.Sprintf("grpo: BindFlags: field %s has an unsupported type", f.Name))
		}
	}
}

// ApplyFlags copies into dst the knobs whose flags were set on fs (bound to
// from by BindFlags).
func ApplyFlags(fs *pflag.FlagSet, from Config, dst *Config) {
	vf, vd := reflect.ValueOf(from), reflect.ValueOf(dst).Elem()
	t := vf.Type()
	for i := 0; i < t.NumField(); i++ {
		if fs.Changed(FlagName(yamlKey(t.Field(i)))) {
			vd.Field(i).Set(vf.Field(i))
		}
	}
}

// fieldDoc is the usage text of a knob's flag: its YAML key.
func fieldDoc(f reflect.StructField) string {
	return "recipe key " + yamlKey(f) + " (see configs/README.md)"
}

// LoadRecipe returns Default() overlaid with a recipe: a YAML file path, or the
// name of a recipe embedded from configs/ ("demo", "retool-grpo-qwen3-4b", ...).
func LoadRecipe(nameOrPath string) (Config, error) {
	if _, err := os.Stat(nameOrPath); err == nil {
		return LoadConfigFile(nameOrPath, Default())
	}
	data, err := configs.Read(nameOrPath)
	if err != nil {
		return Config{}, fmt.Errorf("grpo: %s is neither a file nor a recipe name: %w", nameOrPath, err)
	}
	return DecodeConfig(strings.NewReader(string(data)), "configs/"+strings.TrimSuffix(nameOrPath, ".yaml")+".yaml", Default())
}
