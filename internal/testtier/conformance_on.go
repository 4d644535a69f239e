//go:build conformance

package testtier

const conformance = true
