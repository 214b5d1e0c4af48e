package registry

import (
	"fmt"
	"strings"
	"testing"
)

// TestArena: every string added reads back the same, across chunk
// boundaries, with strings longer than a chunk and empty ones.
func TestArena(t *testing.T) {
	var a arena
	var want []string
	var spans []span
	for i := range 5000 {
		s := strings.Repeat(fmt.Sprintf("%d-", i), i%700)
		switch i {
		case 10:
			s = strings.Repeat("L", arenaChunk+3) // longer than a chunk
		case 11:
			s = ""
		case 12:
			s = strings.Repeat("x", arenaChunk) // exactly a chunk
		}
		want = append(want, s)
		spans = append(spans, a.add(s))
	}
	a.seal()
	if len(a.chunks) < 3 {
		t.Fatalf("%d chunks: the test should cross chunk boundaries", len(a.chunks))
	}
	for i, sp := range spans {
		if got := a.str(sp); got != want[i] {
			t.Fatalf("string %d: got %d bytes %.20q, want %d bytes %.20q", i, len(got), got, len(want[i]), want[i])
		}
	}
}
