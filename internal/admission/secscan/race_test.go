//go:build race

package secscan

// raceEnabled: the race detector makes scanning several times slower.
const raceEnabled = true
