//go:build !race

package catalog_test

// raceEnabled is true under the race detector, which slows the quadratic
// reference implementation about tenfold.
const raceEnabled = false
