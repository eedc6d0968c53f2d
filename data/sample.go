package data

import (
	"bytes"
	_ "embed"
	"fmt"
)

// dapoSample is the built-in sample of dapo_math_17k: 16 problems written for
// mathrl in DAPO-Math-17k's prompt template and slime's layout, the layout of
// the set's origin.
//
//go:embed dapo_sample.jsonl
var dapoSample []byte

// Sample returns the built-in sample of the set called name, read as Pull
// reads the set's origin, and whether the set has one (only dapo_math_17k
// does). A smoke run trains on it where the set has not been pulled. It panics
// if the embedded file does not read, which a test rules out.
func Sample(name string) ([]Row, bool) {
	if name != DAPOSet {
		return nil, false
	}
	rows, err := ReadDAPO(bytes.NewReader(dapoSample), "dapo_sample.jsonl")
	if err != nil {
		panic(fmt.Sprintf("data: the built-in sample of %s: %v", name, err))
	}
	return rows, true
}
