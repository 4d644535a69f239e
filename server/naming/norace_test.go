//go:build !race

package naming

const raceEnabled = false
