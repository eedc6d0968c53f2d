// Package backendtest opens the GoMLX backend that tests run on: GoMLX's pure
// Go backend with sequential ops, unless MATHRL_TEST_BACKEND names a mathrl
// backend kind (xla-cpu: XLA's CPU compiler) or GOMLX_BACKEND a GoMLX
// configuration. It is for tests only; programs choose their backend with
// package backend.
package backendtest
