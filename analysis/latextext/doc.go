// Package latextext converts LaTeX to plain text exactly as pylatexenc 2.10's
// LatexNodes2Text().latex_to_text does with its default settings, which is the
// LaTeX-to-text step of slime's `math` scorer.
//
// The package copies pylatexenc's behaviour, quirks included: \frac{a}{b}
// becomes "a/b" without parentheses, \sqrt[3]{2} loses its index, unknown
// macros such as \sec or \left vanish while their arguments stay, \mbox{x}
// becomes "", and spacing follows pylatexenc's rules (spaces after a macro are
// kept only inside math). Inputs on which pylatexenc raises an exception (for
// example a \sqrt with no argument) give an error here.
//
// The macro tables in tables.go are generated from an installed pylatexenc by
// gen_tables.py; testdata/reference.jsonl holds pylatexenc's own outputs, made
// by testdata/make_reference.py, which the tests compare against.
//
// It knows nothing about scoring: callers decide what to do with the text.
package latextext

//go:generate sh -c "/usr/bin/python3 gen_tables.py > tables.go && gofmt -w tables.go"
