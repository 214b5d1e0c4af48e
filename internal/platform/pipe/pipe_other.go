//go:build !linux

package pipe

import "os"

// Capacity is the capacity Grow asks for where it can.
const Capacity = 256 << 10

// Grow does nothing on this system: pipes keep their capacity.
func Grow(*os.File) {}

// Poll returns f: on this system standard input is read as it is.
func Poll(f *os.File) *os.File { return f }
