package configs

import (
	"os"
	"testing"
)

func TestEmbeddedRecipesMatchFiles(t *testing.T) {
	names := Names()
	if len(names) < 3 {
		t.Fatalf("embedded recipes %v", names)
	}
	for _, n := range names {
		data, err := Read(n)
		if err != nil {
			t.Fatal(err)
		}
		disk, err := os.ReadFile(n + ".yaml")
		if err != nil || string(disk) != string(data) {
			t.Errorf("%s: embedded copy differs from the file (%v)", n, err)
		}
	}
	if _, err := Read("nope"); err == nil {
		t.Error("unknown recipe gave no error")
	}
}
