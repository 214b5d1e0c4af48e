//go:build amd64 && !purego

package jsonscan

// plainGroup is how many bytes plainRun checks at a time: it stops where
// fewer than that are left.
const plainGroup = 16

// plainRun is the SSE2 version of plainRunGeneric (every amd64 processor
// has SSE2): sixteen bytes per comparison, thirty-two per step while
// thirty-two are left. A 62 KB text result, which the relay checks before
// passing it on, takes about a third less time than eight bytes per step
// (BenchmarkObjectDocs).
//
//go:noescape
func plainRun(b []byte) (n int, escaped bool)
