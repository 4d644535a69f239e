//go:build !conformance

package testtier

const conformance = false
