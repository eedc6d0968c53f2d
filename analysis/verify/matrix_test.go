package verify

import "testing"

// Matrices of the arithmetic tests: A and B do not commute (AB ≠ BA).
const (
	matA   = `\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}`
	matB   = `\begin{pmatrix}0 & 1 \\ 1 & 0\end{pmatrix}`
	matAB  = `\begin{pmatrix}2 & 1 \\ 4 & 3\end{pmatrix}`
	matBA  = `\begin{pmatrix}3 & 4 \\ 1 & 2\end{pmatrix}`
	matI   = `\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}`
	mat2x3 = `\begin{pmatrix}1 & 2 & 3 \\ 4 & 5 & 6\end{pmatrix}`
	col3   = `\begin{pmatrix}4 \\ 5 \\ -1\end{pmatrix}`
)

// TestMatrixArithmetic checks sums, differences, products and scalar
// multiples of explicit matrices (the package doc, Values) and their
// neighbours: a wrong sum, the product in the other order, a scalar off by
// one, shapes that do not agree, operations refused.
func TestMatrixArithmetic(t *testing.T) {
	checkEquivalent(t, []equivCase{
		// sums and differences
		{matA + ` + \begin{pmatrix}5 & 6 \\ 7 & 8\end{pmatrix}`, `\begin{pmatrix}6 & 8 \\ 10 & 12\end{pmatrix}`, true},
		{matA + ` + \begin{pmatrix}5 & 6 \\ 7 & 8\end{pmatrix}`, `\begin{pmatrix}6 & 8 \\ 10 & 13\end{pmatrix}`, false},
		{matA + ` - \begin{pmatrix}5 & 6 \\ 7 & 8\end{pmatrix}`, `\begin{pmatrix}-4 & -4 \\ -4 & -4\end{pmatrix}`, true},
		{matA + ` - \begin{pmatrix}5 & 6 \\ 7 & 8\end{pmatrix}`, `\begin{pmatrix}4 & 4 \\ 4 & 4\end{pmatrix}`, false},
		{`\begin{bmatrix}1 \\ 4 \\ -6\end{bmatrix}+\begin{bmatrix}2 \\ -1 \\ 3\end{bmatrix}`, `\begin{pmatrix}3 \\ 3 \\ -3\end{pmatrix}`, true},
		{`[\begin{array}{cc}1 & 2\end{array}] + [\begin{array}{cc}3 & 4\end{array}]`, `\begin{pmatrix}4 & 6\end{pmatrix}`, true},
		{matA + ` + ` + matB + ` - ` + matB, matA, true},
		// products: juxtaposition, \cdot, \times; the order matters
		{matI + ` ` + matI, matI, true},
		{matA + matB, matAB, true},
		{matA + ` \cdot ` + matB, matAB, true},
		{matA + ` \times ` + matB, matAB, true},
		{matB + matA, matBA, true},
		{matB + matA, matAB, false},
		{matA + matB, matBA, false},
		{matA + matB + matA, `\begin{pmatrix}5 & 8 \\ 13 & 20\end{pmatrix}`, true},
		{`\begin{pmatrix}1 & 2 \\ 4 & 8\end{pmatrix}\begin{pmatrix}5 \\ 3\end{pmatrix}`, `\begin{pmatrix}11 \\ 44\end{pmatrix}`, true},
		{`\begin{pmatrix}1 & 2\end{pmatrix}\begin{pmatrix}5 \\ 3\end{pmatrix}`, `\begin{pmatrix}11\end{pmatrix}`, true},
		{`\begin{pmatrix}1 & 2\end{pmatrix}\begin{pmatrix}5 \\ 3\end{pmatrix}`, `11`, false}, // a 1x1 matrix is no scalar
		// scalar multiples
		{`2` + matA, `\begin{pmatrix}2 & 4 \\ 6 & 8\end{pmatrix}`, true},
		{`3` + matA, `\begin{pmatrix}2 & 4 \\ 6 & 8\end{pmatrix}`, false},
		{matA + ` \cdot 2`, `\begin{pmatrix}2 & 4 \\ 6 & 8\end{pmatrix}`, true},
		{`\frac{1}{2}` + matA, `\begin{pmatrix}1/2 & 1 \\ 3/2 & 2\end{pmatrix}`, true},
		{`\frac{1}{2}` + matA, `\begin{pmatrix}1/2 & 1 \\ 3/2 & 3\end{pmatrix}`, false},
		{matA + `/2`, `\begin{pmatrix}0.5 & 1 \\ 1.5 & 2\end{pmatrix}`, true},
		{`-` + matA, `\begin{pmatrix}-1 & -2 \\ -3 & -4\end{pmatrix}`, true},
		{`-` + matA, matA, false},
		{`2(` + matA + ` + ` + matB + `)`, `\begin{pmatrix}2 & 6 \\ 8 & 8\end{pmatrix}`, true},
		{`2` + matA + ` + ` + matB, `\begin{pmatrix}2 & 5 \\ 7 & 8\end{pmatrix}`, true},
		// exact entries: fractions, roots, i
		{`\begin{pmatrix}\frac12 & \sqrt2\end{pmatrix} + \begin{pmatrix}\frac12 & \sqrt8\end{pmatrix}`, `\begin{pmatrix}1 & 3\sqrt2\end{pmatrix}`, true},
		{`\begin{pmatrix}\frac12 & \sqrt2\end{pmatrix} + \begin{pmatrix}\frac12 & \sqrt8\end{pmatrix}`, `\begin{pmatrix}1 & \sqrt{10}\end{pmatrix}`, false},
		{`\sqrt2\begin{pmatrix}\sqrt2 & \sqrt8\end{pmatrix}`, `\begin{pmatrix}2 & 4\end{pmatrix}`, true},
		{`\begin{pmatrix}i & 0\\ 0 & i\end{pmatrix}\begin{pmatrix}i & 0\\ 0 & i\end{pmatrix}`, `\begin{pmatrix}-1 & 0\\ 0 & -1\end{pmatrix}`, true},
		// entries with variables: compared at random points
		{`\begin{pmatrix}x & 1\end{pmatrix} + \begin{pmatrix}x & y\end{pmatrix}`, `\begin{pmatrix}2x & y+1\end{pmatrix}`, true},
		{`\begin{pmatrix}x & 1\end{pmatrix} + \begin{pmatrix}x & y\end{pmatrix}`, `\begin{pmatrix}2x & y\end{pmatrix}`, false},
		{`t\begin{pmatrix}1 \\ 2\end{pmatrix} + \begin{pmatrix}3 \\ 0\end{pmatrix}`, `\begin{pmatrix}t+3 \\ 2t\end{pmatrix}`, true},
		{`s\begin{pmatrix}1 \\ 2\end{pmatrix}`, `\begin{pmatrix}t \\ 2t\end{pmatrix}`, false},
		{`\begin{pmatrix}a & 1\\ 0 & a\end{pmatrix}\begin{pmatrix}a & -1\\ 0 & a\end{pmatrix}`, `\begin{pmatrix}a^2 & 0\\ 0 & a^2\end{pmatrix}`, true}, // a·(-1) + 1·a cancels
		{`\begin{pmatrix}x & 1\end{pmatrix} - \begin{pmatrix}x & 0\end{pmatrix}`, `\begin{pmatrix}0 & 1\end{pmatrix}`, true},
		{`\begin{pmatrix}x & 1\end{pmatrix} - \begin{pmatrix}x & 0\end{pmatrix}`, `\begin{pmatrix}x & 1\end{pmatrix}`, false},
		{`\begin{pmatrix}\cos t & -\sin t\\ \sin t & \cos t\end{pmatrix}\begin{pmatrix}\cos t & -\sin t\\ \sin t & \cos t\end{pmatrix}`,
			`\begin{pmatrix}\cos(2t) & -\sin(2t)\\ \sin(2t) & \cos(2t)\end{pmatrix}`, true},
		{`\begin{pmatrix}\cos t & -\sin t\\ \sin t & \cos t\end{pmatrix}\begin{pmatrix}\cos t & -\sin t\\ \sin t & \cos t\end{pmatrix}`,
			`\begin{pmatrix}\cos(2t) & \sin(2t)\\ -\sin(2t) & \cos(2t)\end{pmatrix}`, false},
		// shapes that do not agree, and what is refused
		{matA + ` + ` + mat2x3, `\begin{pmatrix}2 & 4 & 3 \\ 7 & 9 & 6\end{pmatrix}`, false},
		{matA + ` + ` + mat2x3, `\begin{pmatrix}2 & 4 \\ 7 & 9\end{pmatrix}`, false}, // rows agree, columns do not: no sum of the first columns
		{mat2x3 + mat2x3, `\begin{pmatrix}9 & 12 & 15 \\ 24 & 33 & 42\end{pmatrix}`, false},
		{mat2x3 + matA, `\begin{pmatrix}9 & 12 & 15 \\ 19 & 26 & 33\end{pmatrix}`, false},
		{matA + mat2x3, `\begin{pmatrix}9 & 12 & 15 \\ 19 & 26 & 33\end{pmatrix}`, true},
		{col3 + ` \times ` + col3, `\begin{pmatrix}0 \\ 0 \\ 0\end{pmatrix}`, false}, // a cross product is no matrix product
		{col3 + ` \cdot ` + col3, `42`, false},                                       // nor a dot product
		{matA + ` + 1`, `\begin{pmatrix}2 & 3 \\ 4 & 5\end{pmatrix}`, false},
		{`\frac{1}{` + matA + `}`, matA, false},
		{matA + `^2`, `\begin{pmatrix}7 & 10 \\ 15 & 22\end{pmatrix}`, false},
		{`\begin{vmatrix}1 & 2 \\ 3 & 4\end{vmatrix} + \begin{vmatrix}1 & 0 \\ 0 & 1\end{vmatrix}`, `\begin{pmatrix}2 & 2 \\ 3 & 5\end{pmatrix}`, false},
		{`\begin{vmatrix}1 & 2 \\ 3 & 4\end{vmatrix}`, matA, false}, // a determinant is no matrix
		{`\begin{pmatrix}50\% & 1\end{pmatrix} + \begin{pmatrix}0 & 1\end{pmatrix}`, `\begin{pmatrix}50 & 2\end{pmatrix}`, false},
		{`\begin{pmatrix}1 & 2 \\ 3\end{pmatrix} + ` + matA, `\begin{pmatrix}2 & 4 \\ 6 & 4\end{pmatrix}`, false},
	})
}

// TestMatrixArithmeticResponses checks matrix arithmetic as a response
// states it (in prose, in a box) and as a label.
func TestMatrixArithmeticResponses(t *testing.T) {
	for _, tc := range []struct {
		response, label string
		want            bool
	}{
		{`The sum is $\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix} + \begin{pmatrix}5 & 6 \\ 7 & 8\end{pmatrix}$`,
			`$\begin{pmatrix}6 & 8 \\ 10 & 12\end{pmatrix}$`, true},
		{`When multiplying by identity: $\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix} \begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}$`,
			`$\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}$`, true},
		{`So $\mathbf{M} = \boxed{\frac{1}{6} \begin{pmatrix} 4 & 2 \\ -1 & 1 \end{pmatrix}}$.`,
			`\begin{pmatrix} 2/3 & 1/3 \\ -1/6 & 1/6 \end{pmatrix}`, true},
		{`\boxed{\left[\begin{array}{cc}1 & 2\\3 & 4\end{array}\right]\left[\begin{array}{cc}0 & 1\\1 & 0\end{array}\right]}`, matAB, true},
		{`\boxed{` + matAB + `}`, matA + matB, true},
		{`\boxed{` + matBA + `}`, matA + matB, false},
		{`\boxed{` + matA + ` + ` + mat2x3 + `}`, matA, false},
	} {
		v, err := Check(tc.response, tc.label)
		if err != nil || v.Correct != tc.want {
			t.Errorf("Check(%q, %q) = %+v, %v; want %v", tc.response, tc.label, v, err, tc.want)
		}
	}
}
