//go:build jepsen

package testtier

const jepsen = true
