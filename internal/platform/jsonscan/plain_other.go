//go:build !amd64 || purego

package jsonscan

// plainGroup is how many bytes plainRun checks at a time: it stops where
// fewer than that are left.
const plainGroup = 8

// plainRun is plainRunGeneric where there is no vector version.
func plainRun(b []byte) (n int, escaped bool) { return plainRunGeneric(b) }
