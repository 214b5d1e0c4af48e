//go:build !unix

package install

import "io/fs"

// openNonblock is not needed where FIFOs cannot be opened by name.
const openNonblock = 0

// linkCount is 1 where the platform does not report link counts.
func linkCount(fs.FileInfo) uint64 { return 1 }
