package gomlxfix

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// readsVariable builds a graph on b that adds a variable (1 at first) to its
// input, reading the variable with read; it calls the graph, sets the variable
// to 2, and calls it again.
func readsVariable(t *testing.T, b compute.Backend, read func(v *model.Variable, g *graph.Graph) *graph.Node) (before, after float32) {
	t.Helper()
	store := model.NewStore()
	v := store.RootScope().VariableWithValue("w", float32(1))
	exec := model.MustNewExec(b, store, func(scope *model.Scope, x *graph.Node) *graph.Node {
		return graph.Add(x, read(v, x.Graph()))
	})
	call := func() float32 { return tensors.ToScalar[float32](exec.MustCall(float32(0))[0]) }
	before = call()
	v.MustSetValue(tensors.FromValue(float32(2)))
	return before, call()
}

// TestVariablesStayParameters shows why VariableNode exists: on GoMLX's Go
// backend a graph that reads a variable with NodeValue bakes its value in and
// never sees a new one; read with VariableNode it sees the new value. It runs
// on the Go backend whatever MATHRL_TEST_BACKEND says: the fault is its own.
func TestVariablesStayParameters(t *testing.T) {
	b, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	if !b.Capabilities().PreferConstantsForVariables {
		t.Fatal("GoMLX's Go backend no longer prefers constants for variables: VariableNode can go")
	}
	bare := func(v *model.Variable, g *graph.Graph) *graph.Node { return v.NodeValue(g) }
	if before, after := readsVariable(t, b, bare); before != 1 || after != 1 {
		t.Fatalf("NodeValue: got %v then %v, want 1 then 1 (the value baked in)", before, after)
	}
	if before, after := readsVariable(t, b, VariableNode); before != 1 || after != 2 {
		t.Errorf("VariableNode: got %v then %v, want 1 then 2", before, after)
	}
}

// TestVariableNodeMarksTheGraph reads a variable of the store with
// VariableNode first, then another with NodeValue: VariableNode marks the
// whole graph, so that the later read is a parameter too and sees the other
// variable's new value.
func TestVariableNodeMarksTheGraph(t *testing.T) {
	b, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	store := model.NewStore()
	first := store.RootScope().VariableWithValue("first", float32(10))
	later := store.RootScope().VariableWithValue("later", float32(1))
	exec := model.MustNewExec(b, store, func(scope *model.Scope, x *graph.Node) *graph.Node {
		return graph.Add(graph.Add(x, VariableNode(first, x.Graph())), later.NodeValue(x.Graph()))
	})
	call := func() float32 { return tensors.ToScalar[float32](exec.MustCall(float32(0))[0]) }
	before := call()
	later.MustSetValue(tensors.FromValue(float32(2)))
	if after := call(); before != 11 || after != 12 {
		t.Errorf("10 + later, later read after VariableNode: got %v then %v, want 11 then 12", before, after)
	}
}

// TestNoBareNodeValue checks that no graph the project or its tests build
// reads a variable with NodeValue: every read goes through VariableNode (see
// there). Only this package's tests call NodeValue, to show the fault.
func TestNoBareNodeValue(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || filepath.Base(filepath.Dir(path)) == "gomlxfix" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "NodeValue" || sel.Sel.Name == "ValueGraph") {
				t.Errorf("%s: %s: read the variable with gomlxfix.VariableNode", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
