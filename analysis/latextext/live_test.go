package latextext

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/data"
	"github.com/mathrl/mathrl/internal/testenv"
)

// randomPieces are the building blocks of random inputs: math as models write
// it, plus the constructs where pylatexenc's parser has special cases.
var randomPieces = []string{
	"x", "y", "1", "2", "10", "-", "+", "=", ",", ".", "(", ")", "[", "]", "|", "^", "_", "'", "*", "/", "<", ">",
	" ", "  ", "\n", "\n\n", "\t", "{", "}", "{", "}", "$", "$$", "%", "% c\n", "&", "~", "--", "``", "''", "!`",
	`\frac`, `\dfrac`, `\tfrac`, `\sqrt`, `\sqrt[3]`, `\pi`, `\infty`, `\cdot`, `\times`, `\le`, `\pm`, `\circ`,
	`\text`, `\textbf`, `\mbox`, `\mathbf`, `\mathbb`, `\mathrm`, `\operatorname`, `\left`, `\right`, `\left(`,
	`\right)`, `\{`, `\}`, `\$`, `\%`, `\&`, `\_`, `\#`, `\,`, `\;`, `\!`, `\ `, `\quad`, `\\`, `\\*`, `\\[1pt]`,
	`\sin`, `\log`, `\sec`, `\binom`, `\boxed`, `\overline`, `\hat`, `\vec`, `\'`, `\"`, `\c`, `\not`, `\i`,
	`\(`, `\)`, `\[`, `\]`, `\begin{pmatrix}`, `\end{pmatrix}`, `\begin{cases}`, `\end{cases}`,
	`\begin{align*}`, `\end{align*}`, `\begin{array}{cc}`, `\end{array}`, `\begin{foo}`, `\end{foo}`, `\begin`,
	`\end`, `\item`, `\item[a]`, `\hspace*{1em}`, `\verb|a|`, `\section*{s}`, `\foo`, `\alpha`, `\ldots`, `\to`,
	"é", "π", "\u00a0", "√",
}

func randomLatex(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(12) + 1; n > 0; n-- {
		b.WriteString(randomPieces[r.IntN(len(randomPieces))])
	}
	return b.String()
}

// TestAgainstPylatexenc runs Debian's pylatexenc on a few thousand random
// inputs and requires ToText to agree on at least 99.5% of them.
func TestAgainstPylatexenc(t *testing.T) {
	py := testenv.DebianPython(t, "pylatexenc")
	r := rand.New(rand.NewPCG(7, 11))
	inputs := make([]string, 3000)
	for i := range inputs {
		inputs[i] = randomLatex(r)
	}
	compareWithPylatexenc(t, py, inputs, 0.995)
}

// TestDatasetTexts converts every problem and solution of MATH-500 and AIME
// 2024/2025 (whole paragraphs of LaTeX, with $...$, environments and Asymptote
// code) and requires the same text as pylatexenc for all of them.
func TestDatasetTexts(t *testing.T) {
	dir := testenv.DataDir(t, "math500.jsonl")
	py := testenv.DebianPython(t, "pylatexenc")
	var inputs []string
	for _, name := range []string{"math500", "aime24", "aime25"} {
		rows, err := data.LoadSet(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			inputs = append(inputs, r.Problem)
			if r.Solution != nil {
				inputs = append(inputs, *r.Solution)
			}
		}
	}
	compareWithPylatexenc(t, py, inputs, 1)
}

// compareWithPylatexenc converts inputs with pylatexenc (testdata/pylatexenc_batch.py)
// and with ToText, logs the differences, and fails below the agreement rate minRate.
func compareWithPylatexenc(t *testing.T, py string, inputs []string, minRate float64) {
	t.Helper()
	var in bytes.Buffer
	for _, s := range inputs {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	cmd := exec.Command(py, filepath.Join("testdata", "pylatexenc_batch.py"))
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pylatexenc: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	n, same, shown := 0, 0, 0
	for ; sc.Scan(); n++ {
		var ref struct {
			Output *string `json:"output"`
			Error  *string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ref); err != nil || n >= len(inputs) {
			t.Fatalf("pylatexenc output line %d: %v", n+1, err)
		}
		got, err := ToText(inputs[n])
		if (ref.Error != nil && err != nil) || (ref.Output != nil && err == nil && got == *ref.Output) {
			same++
			continue
		}
		if shown++; shown <= 30 {
			t.Logf("ToText(%q) = %q, %v; pylatexenc: %q %v", inputs[n], got, err, deref(ref.Output), deref(ref.Error))
		}
	}
	if n != len(inputs) {
		t.Fatalf("pylatexenc answered %d of %d inputs", n, len(inputs))
	}
	rate := float64(same) / float64(len(inputs))
	t.Logf("%d / %d inputs identical (%.2f%%)", same, len(inputs), 100*rate)
	if rate < minRate {
		t.Errorf("agreement with pylatexenc %.2f%%, want >= %.2f%%", 100*rate, 100*minRate)
	}
}
