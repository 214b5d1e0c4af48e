//go:build !unix

package local

// openNonblock is not needed where FIFOs cannot be opened by name.
const openNonblock = 0
