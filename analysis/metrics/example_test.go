package metrics_test

import (
	"fmt"

	"github.com/mathrl/mathrl/analysis/metrics"
)

func ExamplePassAtK() {
	// 16 samples, 4 correct: pass@1 is the fraction correct, pass@16 is 1.
	fmt.Printf("%.4f %.4f %.4f\n", metrics.PassAtK(16, 4, 1), metrics.PassAtK(16, 4, 4), metrics.PassAtK(16, 4, 16))
	// Output: 0.2500 0.7280 1.0000
}
