// Package testenv finds the external references that mathrl's tests compare
// against: the downloaded datasets, the tiny Hugging Face checkpoint, the npm and
// Debian reference implementations installed by scripts/setup.sh.
//
// A missing reference skips the test on a developer's machine and fails it when
// CI is set (or MATHRL_REQUIRE_REFS=1), so CI can never pass by skipping.
package testenv
