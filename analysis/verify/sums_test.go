package verify

import "testing"

// TestSums checks sums and products with bounds (see the package doc,
// Values): the index bound, sequences as unknown functions of the index,
// closed forms at integer points, the refusals, and their neighbours.
func TestSums(t *testing.T) {
	checkEquivalent(t, []equivCase{
		// the order of the factors; the index's name
		{`F_n = \sum_{k=0}^{n-1} F_{n-k-1} F_k`, `F_n = \sum_{k=0}^{n-1} F_k F_{n-k-1}`, true},
		{`\sum_{k=0}^{n-1} F_{n-k-1} F_k`, `F_n = \sum_{k=0}^{n-1} F_k F_{n-k-1}`, true},
		{`F_n = \sum_{k=0}^{n-1} F_{n-k-1} F_k`, `F_n = \sum_{j=0}^{n-1} F_{n-1-j} F_j`, true},
		{`F_n = \sum_{k=0}^{n-1} F_{n-k-1} F_k`, `F_n = \sum_{k=0}^{n-1} F_k F_{n-k}`, false},
		{`F_n = \sum_{k=0}^{n-1} F_{n-k-1} F_k`, `F_n = \sum_{k=0}^{n-1} G_k G_{n-k-1}`, false},
		{`F_n = \sum_{k=0}^{n-1} F_{n-k-1} F_k`, `F_n = \sum_{k=0}^{n} F_k F_{n-k-1}`, false},
		{`F_n = \sum_{k=0}^{n-1} F_{n-k-1} F_k`, `F_n = \prod_{k=0}^{n-1} F_k F_{n-k-1}`, false},
		{`\sum_{k=0}^{n} F_k`, `\sum_{k=0}^{n} F_{n-k}`, true},
		{`\sum_{k=0}^{n} F_k`, `\sum_{k=0}^{n} G_k`, false}, // two letters, two sequences
		{`\sum_{k=1}^{n} F_k G_k`, `\sum_{k=1}^{n} F_k^2`, false},
		{`\sum_{k=1}^{n} (2F_k + G_k)`, `\sum_{k=1}^{n} (F_k + 2G_k)`, false}, // the same letters on both sides, not the same terms
		{`\sum_{k=1}^{n} (2F_k + G_k)`, `\sum_{k=1}^{n} (G_k + 2F_k)`, true},
		{`\sum_{k=0}^{n} F_k`, `F_n + \sum_{k=0}^{n-1} F_k`, true},
		{`\sum_{k=0}^{n} F_k`, `F_{n+1} + \sum_{k=0}^{n-1} F_k`, false},
		{`\sum_{k=1}^{n} F_k`, `F_{n+2} - 1`, false},
		{`\sum_{i=1}^{n} a_i`, `\sum_{j=1}^{n} a_j`, true},
		{`\sum_{k=0}^{n} k`, `\sum_{j=0}^{n} j`, true},
		{`\sum_{i=1}^{n} i`, `\sum_{k=1}^{n} k`, true},
		{`\sum_{k=1}^{n} kx`, `\sum_{k=1}^{n} xk`, true},
		{`\sum_{k=1}^{n} kx`, `\sum_{k=1}^{n} xy`, false},
		// bounds
		{`\sum_{k=0}^{n} k`, `\sum_{k=1}^{n} k`, true},
		{`\sum_{k=0}^{n} (k+1)`, `\sum_{k=1}^{n} (k+1)`, false},
		{`\sum_{k=1}^{n} k`, `\sum_{k=1}^{n-1} k`, false},
		{`\sum_{k=1}^{n} k`, `\sum_{k=1}^{n+1} (k-1)`, true},
		{`\sum\limits_{k=1}^n k^2`, `\sum^{n}_{k=1} k^2`, true},
		{`\sum_{k=1}^{10} k`, `55`, true},
		{`\sum_{k=1}^{10} k`, `56`, false},
		{`\sum_{k=1}^{10} k = 55`, `55`, true},
		{`\prod_{k=1}^{5} k`, `120`, true},
		{`\sum_{k=3}^{2} k`, `0`, true},
		{`\prod_{k=3}^{2} k`, `1`, true},
		{`\sum_{k=3}^{1} k`, `0`, false},
		// the summand is a product
		{`\sum_{k=1}^{3} k + 1`, `7`, true},
		{`\sum_{k=1}^{3} (k + 1)`, `9`, true},
		{`2\sum_{k=1}^{n} k`, `n(n+1)`, true},
		// closed forms at integer points
		{`\sum_{k=1}^{n} k`, `\frac{n(n+1)}{2}`, true},
		{`\sum_{k=1}^{n} k`, `\frac{n(n-1)}{2}`, false},
		{`\sum_{k=1}^{n} k`, `n^2`, false},
		{`\sum_{k=1}^{n} (2k-1)`, `n^2`, true},
		{`\sum_{k=1}^{n} k^2`, `\frac{n(n+1)(2n+1)}{6}`, true},
		{`\sum_{k=0}^{n} \binom{n}{k}`, `2^n`, true},
		{`\sum_{k=0}^{n} x^k`, `\frac{x^{n+1}-1}{x-1}`, true},
		{`\sum_{k=0}^{n} x^k`, `\frac{x^{n}-1}{x-1}`, false},
		{`\prod_{k=1}^{n} k`, `n!`, true},
		{`\prod_{k=1}^{n} k`, `\sum_{k=1}^{n} k`, false},
		{`\prod_{k=1}^{n} \frac{k+1}{k}`, `n+1`, true},
		{`\sum_{k=1}^{n}\sum_{j=1}^{k} 1`, `\frac{n(n+1)}{2}`, true},
		{`\sum_{k=1}^{n}\sum_{j=1}^{n} jk`, `\left(\frac{n(n+1)}{2}\right)^2`, true},
		// equations
		{`\sum_{k=1}^{n} F_k = F_{n+2} - 1`, `F_{n+2} - 1 = \sum_{k=1}^{n} F_k`, true},
		{`\sum_{k=1}^{n} F_k = F_{n+2} - 1`, `F_{n+2} + 1 = \sum_{k=1}^{n} F_k`, false},
		// refused
		{`\sum_{k=1}^{n/2} k`, `\sum_{j=1}^{n/2} j`, false},
		{`\sum_{k=1/2}^{3} k`, `\frac{9}{2}`, false},
		{`\sum_{k=1}^{1000} k`, `500500`, false},
		{`\sum_{k=1}^{\infty} \frac{1}{2^k}`, `1`, false},
		{`\sum_{kk=1}^{n} k`, `\sum_{k=1}^{n} k`, false},
		{`\sum_{k_1=1}^{n} k_1`, `\sum_{k=1}^{n} k`, false},
		{`\sum_{\alpha=1}^{n} \alpha`, `\sum_{k=1}^{n} k`, false},
		{`\sum_{k} k`, `\sum_{k=1}^{n} k`, false},
		{`\sum_{i=1}^{n}\sum_{j=1}^{i}\sum_{k=1}^{j} 1`, `\binom{n+2}{3}`, false},
		{`\sum_{k=1}^{50} 2^{100k}`, `\sum_{k=1}^{50} 2^{100k} + 1`, false},
		{`\sum_{k=1}^{n} \frac{1}{k-n}`, `\sum_{k=1}^{n} \frac{2}{k-n}`, false}, // undefined at every point
	})
}

// TestSumResponses checks sums in whole responses and labels: the
// peer verifier's case, and a label with a sum against a closed form.
func TestSumResponses(t *testing.T) {
	for _, tc := range []struct {
		response, label string
		want            bool
	}{
		{`$F_n = \sum_{k=0}^{n-1} F_{n-k-1} F_k$`, `$F_n = \sum_{k=0}^{n-1} F_k F_{n-k-1}$`, true},
		{`$F_n = \sum_{k=0}^{n-1} F_{n-k} F_k$`, `$F_n = \sum_{k=0}^{n-1} F_k F_{n-k-1}$`, false},
		{`So the total is $\boxed{\frac{n(n+1)}{2}}$.`, `\sum_{k=1}^{n} k`, true},
		{`The sum is $\sum_{k=1}^{100} k = 5050$.`, `5050`, true},
		{`\boxed{\sum_{k=1}^{99} k}`, `5050`, false},
	} {
		v, err := Check(tc.response, tc.label)
		if err != nil || v.Correct != tc.want {
			t.Errorf("Check(%q, %q) = %v (read %q), %v; want %v", tc.response, tc.label, v.Correct, v.Answer, err, tc.want)
		}
	}
}
