//go:build !linux

// Command statfloor measures the statx calls of a no-change rescan; statx
// is Linux's, so elsewhere it only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "statfloor: Linux only (it measures statx calls)")
	os.Exit(2)
}
