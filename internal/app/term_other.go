//go:build !linux

package app

import (
	"bufio"
	"os"
	"strings"
)

// echoHidden says whether readNoEcho hides what is typed: not on this
// system, where the value is read as typed.
const echoHidden = false

// readNoEcho reads one line from the terminal f.
func readNoEcho(f *os.File) (string, error) {
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
