//go:build !unix

package session

// openNonblock is not needed where FIFOs cannot be opened by name.
const openNonblock = 0
