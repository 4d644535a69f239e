//go:build cluster

package testtier

const cluster = true
