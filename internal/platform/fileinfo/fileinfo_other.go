//go:build !unix

package fileinfo

import "io/fs"

// OpenNonblock is not needed where FIFOs cannot be opened by name.
const OpenNonblock = 0

// OpenNoFollow is not available here; callers check the file is regular.
const OpenNoFollow = 0

// LinkCount is 1 where the platform does not report link counts.
func LinkCount(fs.FileInfo) uint64 { return 1 }
