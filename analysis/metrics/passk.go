package metrics

import "fmt"

// PassAtK returns the unbiased estimate of pass@k from n samples of which c are
// correct (Chen et al. 2021, "Evaluating Large Language Models Trained on
// Code"): 1 - C(n-c, k)/C(n, k), the probability that k samples drawn without
// replacement from the n include at least one correct one. It is computed as
// 1 - prod_{i=n-c+1..n} (1 - k/i), which needs no large binomials.
//
// It panics unless 1 <= k <= n and 0 <= c <= n: those are caller bugs.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		panic(fmt.Sprintf("metrics: PassAtK(n=%d, c=%d, k=%d) needs 1 <= k <= n and 0 <= c <= n", n, c, k))
	}
	if n-c < k {
		return 1
	}
	q := 1.0 // C(n-c, k)/C(n, k)
	for i := n - c + 1; i <= n; i++ {
		q *= 1 - float64(k)/float64(i)
	}
	return 1 - q
}
