//go:build !process

package testtier

const process = false
