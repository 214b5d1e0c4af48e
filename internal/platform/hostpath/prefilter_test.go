package hostpath

import (
	"bytes"
	"testing"
)

// prefilterScrubbers cover paths of plain ASCII, of characters JSON must
// escape or Go's encoder escapes, and of characters outside ASCII and
// outside Unicode's basic plane.
func prefilterScrubbers() []*Scrubber {
	return []*Scrubber{
		New("/srv/app"),
		New("/data/<x>&y"),
		New(`/data/q"uo\te`),
		New("/home/zoë/skills"),
		New("/home/𝄞/x"),
		New("/tmp/\uFFFD"),
	}
}

// TestMayHold: the cheap check passes a document only when no host path
// can be in it, whatever escapes it holds.
func TestMayHold(t *testing.T) {
	tests := []struct {
		path, doc string
		want      bool
	}{
		{"/srv/app", `{"text":"\u003cb\u003e \u0026 \u2028"}`, false}, // Go's HTML escapes: no path character
		{"/srv/app", `{"text":"a\nb\tc\"d\\e"}`, false},
		{"/srv/app", `{"text":"/srv/app/x"}`, true},
		{"/srv/app", `{"text":"\/srv\/app"}`, true},
		{"/srv/app", `{"text":"/srv/\u0061pp"}`, true},
		{"/srv/app", `{"text":"\u0041"}`, false},  // "A": not in the path
		{"/srv/app", `{"text":"\\u002f"}`, false}, // an escaped backslash, then text
		{"/data/<x>&y", `{"text":"\u003c"}`, true},
		{`/data/q"uo\te`, `{"text":"\""}`, true},
		{"/home/zoë/skills", `{"text":"\u00eb"}`, true},
		{"/home/zoë/skills", `{"text":"\u00e9"}`, false},
		{"/home/𝄞/x", `{"text":"\ud834\udd1e"}`, true},
		{"/srv/app", `{"text":"\ud834\udd1e"}`, false},
		{"/tmp/\uFFFD", "{\"text\":\"\xff\"}", true},
		{"/srv/app", `{"text":"\u12"}`, true}, // malformed: the decoder decides
	}
	for _, tt := range tests {
		if got := New(tt.path).mayHold([]byte(tt.doc)); got != tt.want {
			t.Errorf("New(%q).mayHold(%s) = %v, want %v", tt.path, tt.doc, got, tt.want)
		}
	}
}

// FuzzScrubberJSON is the differential test of the cheap check: for any
// document, JSON (which skips documents the check passes) returns exactly
// what decoding every document returns.
func FuzzScrubberJSON(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"no path"}]}`,
		`{"text":"at \/srv\/app\/x"}`,
		`{"text":"\u003cb\u003e\u0026 /data/\u003cx\u003e\u0026y/z"}`,
		`{"/home/zo\u00eb/skills":1}`,
		`["\ud834\udd1e", "/home/\ud834\udd1e/x"]`,
		`{"q":"/data/q\"uo\\te/1"}`,
		"[\"/tmp/\xff\"]",
	} {
		f.Add([]byte(seed))
	}
	scrubbers := prefilterScrubbers()
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, s := range scrubbers {
			if got, want := s.JSON(raw), s.decodeJSON(raw); !bytes.Equal(got, want) {
				t.Fatalf("scrubber of %q: JSON(%q) = %q, decoding gives %q", s.paths, raw, got, want)
			}
		}
	})
}
