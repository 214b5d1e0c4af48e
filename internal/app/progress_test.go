package app

import (
	"bytes"
	"strings"
	"testing"
)

// TestStepLine: each step redraws the one line, outside text is rendered
// for the terminal and cut, and clear erases only a drawn line.
func TestStepLine(t *testing.T) {
	var b bytes.Buffer
	l := &stepLine{tty: &b}
	l.clear()
	l.show("introspecting server notes")
	l.show("reading /tmp/\x1b]0;owned\x07" + strings.Repeat("x", 120))
	l.clear()
	l.clear()
	want := "\r\x1b[Kintrospecting server notes…" +
		"\r\x1b[Kreading /tmp/\\u001b]0;owned\\u0007" + strings.Repeat("x", 100-len("reading /tmp/\x1b]0;owned\x07")) + "……" +
		"\r\x1b[K"
	if got := b.String(); got != want {
		t.Errorf("drawn %q\nwant  %q", got, want)
	}
}
