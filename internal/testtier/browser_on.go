//go:build browser

package testtier

const browser = true
