//go:build race

package naming

// raceEnabled: the race detector makes each fake-clock tick ~10x slower.
const raceEnabled = true
