package gomlxfix

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// VariableNode is v.NodeValue(g), with v a parameter of g on every backend.
//
// GoMLX v0.28.16's pure Go backend prefers variables as constants
// (compute.Capabilities.PreferConstantsForVariables), and model.Variable then
// bakes the value of every variable into a graph not marked as training: the
// sampler's steps, the log-prob, loss and optimizer graphs. Such a graph never
// sees a later value (GRPO samples from the weights it has just updated, and
// AdamW reads the moments it wrote) and holds a second copy of every weight.
// VariableNode marks g as training first, which GoMLX reads only there and in
// layers the project does not use (dropout, batch normalisation), so that v
// and every variable read after it in g are parameters, as on XLA.
// TestVariablesStayParameters shows the difference; TestNoBareNodeValue keeps
// every variable read of the project's graphs going through here.
func VariableNode(v *model.Variable, g *graph.Graph) *graph.Node {
	model.SetGraphParam(g, model.ScopeSeparator+model.GraphParamIsTraining, true)
	return v.NodeValue(g)
}
