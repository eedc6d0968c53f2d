// Package configs embeds the training recipes of this folder, so that the
// mathrl binary can run them by name from any directory (`mathrl train` with
// no arguments runs demo.yaml). The files themselves are the documentation;
// README.md lists every key.
package configs

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Demo is the name of the recipe `mathrl train` runs with no arguments.
const Demo = "demo"

// Read returns the YAML of the recipe name ("demo", "retool-grpo-qwen3-4b", ...,
// with or without .yaml).
func Read(name string) ([]byte, error) {
	data, err := files.ReadFile(strings.TrimSuffix(name, ".yaml") + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("configs: no recipe %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}

// Names lists the embedded recipes, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".") // the embedded folder always reads
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}
