//go:build process

package testtier

const process = true
