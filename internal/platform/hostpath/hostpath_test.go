package hostpath_test

import (
	"testing"

	"github.com/skillgate/skillgate/internal/platform/hostpath"
)

func TestScrubberString(t *testing.T) {
	s := hostpath.New("/srv/app/.skillgate", "/srv/app", "/", "")
	tests := []struct{ in, want string }{
		{"open /srv/app/.skillgate/sandbox/github/v1/x: denied", "open [host path]/sandbox/github/v1/x: denied"},
		{"file:///srv/app/.skillgate/credentials.key", "[host path]/credentials.key"},
		{"root /srv/app/skills and /srv/app", "root [host path]/skills and [host path]"},
		{"/srv/apple and /data/srv/app stay", "/srv/apple and /data/srv/app stay"},
		{"'/srv/app'", "'[host path]'"},
		{"nothing here", "nothing here"},
	}
	for _, tt := range tests {
		if got := s.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := (*hostpath.Scrubber)(nil).String("/srv/app"); got != "/srv/app" {
		t.Errorf("nil scrubber: %q", got)
	}
}

func TestScrubberJSON(t *testing.T) {
	s := hostpath.New("/srv/app")
	tests := []struct{ in, want string }{
		{`{"content":[{"type":"text","text":"no path"}]}`, `{"content":[{"type":"text","text":"no path"}]}`},
		{`{"text":"at /srv/app/x","n":1.50}`, `{"n":1.50,"text":"at [host path]/x"}`},
		{`{"text":"at \/srv\/app\/x"}`, `{"text":"at [host path]/x"}`},
		{`not json /srv/app`, `not json /srv/app`},
		{`{"text":"\u003cb\u003e \/srv\/apple"}`, `{"text":"\u003cb\u003e \/srv\/apple"}`}, // escapes, no host path: as it came
	}
	for _, tt := range tests {
		if got := string(s.JSON([]byte(tt.in))); got != tt.want {
			t.Errorf("JSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
