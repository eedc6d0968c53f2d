package arith

import (
	"math/big"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestGenerateAnswersExact(t *testing.T) {
	tasks := Generate(rand.New(rand.NewPCG(1, 2)), 500, 9, "*+", "t/")
	ops := map[string]int{}
	for _, task := range tasks {
		ops[task.Op]++
		// independent check with math/big
		a, b := big.NewInt(task.A), big.NewInt(task.B)
		want := new(big.Int)
		if task.Op == "*" {
			want.Mul(a, b)
		} else {
			want.Add(a, b)
		}
		if task.Answer != want.String() {
			t.Fatalf("%s: answer %s, want %s", task.Problem, task.Answer, want)
		}
		if !strings.Contains(task.Problem, task.Op) || !strings.HasPrefix(task.ID, "t/") {
			t.Fatalf("task %+v", task)
		}
	}
	if ops["*"] == 0 || ops["+"] == 0 {
		t.Errorf("ops drawn: %v", ops)
	}
	again := Generate(rand.New(rand.NewPCG(1, 2)), 500, 9, "*+", "t/")
	if !reflect.DeepEqual(tasks, again) {
		t.Error("same seed gave different tasks")
	}
}

// TestTraceCodeRunsInPython runs the warm-start code of some hard tasks in
// python3 and checks that the printed output is the answer.
func TestTraceCodeRunsInPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	n := 0
	for _, task := range Generate(rand.New(rand.NewPCG(3, 4)), 40, 6, "*+", "") {
		tr := WarmStart(task)
		if !strings.HasSuffix(tr.Final, `\boxed{`+task.Answer+`}`) {
			t.Fatalf("final %q does not box %s", tr.Final, task.Answer)
		}
		if tr.Code == "" {
			if task.Hard() {
				t.Errorf("%s: hard task without a tool call", task.Problem)
			}
			continue
		}
		n++
		out, err := exec.Command(py, "-c", tr.Code).Output()
		if err != nil {
			t.Fatalf("%s: python: %v", tr.Code, err)
		}
		if got := strings.TrimSpace(string(out)); got != task.Answer {
			t.Errorf("%s printed %s, want %s", tr.Code, got, task.Answer)
		}
	}
	if n == 0 {
		t.Error("no trace called the tool")
	}
}

// TestToolTraceOnEasyTasks checks that ToolTrace calls the tool on a task
// WarmStart answers directly, with the same boxed answer.
func TestToolTraceOnEasyTasks(t *testing.T) {
	task := New("*", 7, 8)
	if WarmStart(task).Code != "" {
		t.Fatalf("WarmStart calls the tool on the easy task %s", task.Problem)
	}
	tr := ToolTrace(task)
	if tr.Code != "print(7*8)" || tr.Final != `\boxed{56}` {
		t.Errorf("ToolTrace(%s) = code %q, final %q", task.Problem, tr.Code, tr.Final)
	}
}

func TestGenerateOps(t *testing.T) {
	for _, ops := range []string{"*", "+"} {
		for _, task := range Generate(rand.New(rand.NewPCG(5, 6)), 200, 3, ops, "") {
			if task.Op != ops {
				t.Fatalf("ops %q drew %s", ops, task.Problem)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ops \"-\" did not panic")
		}
	}()
	Generate(rand.New(rand.NewPCG(5, 6)), 1, 3, "-", "")
}

// TestUnprintedToolTrace runs the unprinted code in python3: it must print
// nothing and exit cleanly, while the final answer stays the task's.
func TestUnprintedToolTrace(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	for _, task := range []Task{New("*", 7, 8), New("+", 4821, 37)} {
		tr := UnprintedToolTrace(task)
		if tr.Final != `\boxed{`+task.Answer+`}` || strings.Contains(tr.Code, "print") {
			t.Fatalf("UnprintedToolTrace(%s) = code %q, final %q", task.Problem, tr.Code, tr.Final)
		}
		out, err := exec.Command(py, "-c", tr.Code).CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("%s: python printed %q, err %v; want nothing", tr.Code, out, err)
		}
		out, err = exec.Command(py, "-c", "print("+tr.Code+")").Output()
		if err != nil || strings.TrimSpace(string(out)) != task.Answer {
			t.Errorf("print(%s) = %q, %v; want %s", tr.Code, out, err, task.Answer)
		}
	}
}
