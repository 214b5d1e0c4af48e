//go:build !linux

// statx is Linux's: elsewhere statfloor only says so.

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "statfloor: Linux only (it measures statx calls)")
	os.Exit(2)
}
