package admin

import (
	"strings"
	"testing"
)

// TestClipOutput: captured output is shown whole up to maxShownOutput
// bytes; beyond, cut at a character and marked truncated.
func TestClipOutput(t *testing.T) {
	long := strings.Repeat("a", maxShownOutput-1) + "é" + "tail"
	for _, tc := range []struct {
		in   string
		want shownOutput
	}{
		{"one\ntwo", shownOutput{Text: "one\ntwo", Bound: maxShownOutput}},
		{strings.Repeat("b", maxShownOutput), shownOutput{Text: strings.Repeat("b", maxShownOutput), Bound: maxShownOutput}},
		{long, shownOutput{Text: strings.Repeat("a", maxShownOutput-1), Truncated: true, Bound: maxShownOutput}},
	} {
		if got := clipOutput(tc.in); got != tc.want {
			t.Errorf("clipOutput(%d bytes) = %d bytes, truncated %t; want %d bytes, truncated %t", len(tc.in), len(got.Text), got.Truncated, len(tc.want.Text), tc.want.Truncated)
		}
	}
}
