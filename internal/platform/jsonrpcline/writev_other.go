//go:build !linux

package jsonrpcline

import "io"

// vectorMin is the smallest message writeVectored is asked to write.
const vectorMin = 16 << 10

// writeVectored reports false: only Linux writes messages with writev(2)
// here; elsewhere the Writer copies the parts into one buffer.
func writeVectored(io.Writer, [][]byte) (bool, error) { return false, nil }
