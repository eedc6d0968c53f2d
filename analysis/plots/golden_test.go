package plots

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/mathrl/mathrl/analysis/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs in testdata/golden")

// checkGolden renders grid as PNG and compares it pixel by pixel with
// testdata/golden/name.png; at most 0.2% of the pixels may differ (room for
// rasteriser rounding on other CPUs, not for a changed text, bar or line).
// On a mismatch the new image is written beside the golden one as name.got.png.
func checkGolden(t *testing.T, name string, grid [][]*plot.Plot, w, h vg.Length) {
	t.Helper()
	got, err := GridPNG(grid, w, h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", name+".png")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it, then look at it)", err)
	}
	a, b := decode(t, got), decode(t, want)
	if a.Bounds() != b.Bounds() {
		t.Fatalf("%s: size %v, golden %v", name, a.Bounds(), b.Bounds())
	}
	diff, total := 0, 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			total++
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if absDiff(r1, r2) > 0x1000 || absDiff(g1, g2) > 0x1000 || absDiff(b1, b2) > 0x1000 {
				diff++
			}
		}
	}
	if float64(diff) > 0.002*float64(total) {
		os.WriteFile(filepath.Join("testdata", "golden", name+".got.png"), got, 0o644)
		t.Errorf("%s: %d of %d pixels differ from the golden image (new one in testdata/golden/%s.got.png)", name, diff, total, name)
	}
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestGoldenCardBenchmarks(t *testing.T) {
	p, err := CardBenchmarks(loadCards(t))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "card_benchmarks", [][]*plot.Plot{{p}}, Width, Height)
}

func TestGoldenTrainingCurves(t *testing.T) {
	var steps []metrics.StepMetrics
	for i := 1; i <= 30; i++ {
		f := float64(i) / 30
		steps = append(steps, metrics.StepMetrics{Version: 1, Step: i, Samples: 64, RewardMean: -0.5 + f, RewardStd: 0.8,
			Accuracy: 0.25 + 0.5*f, ResponseLenMean: 800 - 200*f, ResponseLenMax: 1024, TruncationRate: 0.1 * (1 - f),
			ToolCallsPerSample: 0.5 + f, ToolErrorRate: 0.05, Entropy: 0.5 - 0.1*f, ClipFraction: 0.02, LR: 1e-6})
	}
	grid, err := TrainingCurves("golden", steps, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "training", grid, TrainingWidth, TrainingHeight)
}
