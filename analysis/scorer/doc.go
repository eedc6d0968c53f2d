// Package scorer ports slime's three rule-based math reward functions to Go:
// `math` (grade_answer_verl), `deepscaler` (get_deepscaler_rule_based_reward) and
// `dapo` (the Minerva-style compute_score), with their dispatch (rm_type, the
// boxed_ prefix).
//
// The port is faithful, quirks included: the last-\boxed extractor with naive
// brace counting, Hendrycks' string normaliser in its exact step order, the
// second ("sympy-path") normaliser, the element-wise tuple rules, dapo's
// last-300-characters Answer: rule and its str(int(float(label))) label
// conversion, deepscaler's </think> gate. Python semantics that matter to the
// verdicts (float() syntax, str.strip, str.lower, str.isdigit, regular
// expression classes) are reproduced in python.go.
//
// The symbolic check sympy.simplify(a-b) == 0 is delegated to package
// analysis/symbolic and the LaTeX-to-text step to package analysis/latextext.
// Reading and writing JSONL lives in stream.go; validating the scorers on
// datasets lives in the subpackage validation.
package scorer
