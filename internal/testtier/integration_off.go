//go:build !integration

package testtier

const integration = false
