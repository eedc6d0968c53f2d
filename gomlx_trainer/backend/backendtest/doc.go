// Package backendtest opens the GoMLX backend that tests run on: GoMLX's pure
// Go backend with sequential ops, unless GOMLX_BACKEND names another. It is
// for tests only; programs choose their backend with package backend.
package backendtest
