package policy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"90m", 90 * time.Minute, ""},
		{"2h30m", 150 * time.Minute, ""},
		{"7d", 7 * 24 * time.Hour, ""},
		{"1.5d", 36 * time.Hour, ""},
		{"0s", 0, ""},
		{"3d12h", 84 * time.Hour, ""},
		{"1d30m", 24*time.Hour + 30*time.Minute, ""},
		{"1d-1h", 0, `not a duration: "1d-1h" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"1d2d", 0, `not a duration: "1d2d" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"+1d", 0, `not a duration: "+1d" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"d", 0, `not a duration: "d" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"", 0, `not a duration: "" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"-1h", 0, `not a duration: "-1h" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"-2d", 0, `not a duration: "-2d" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"1e9d", 0, `not a duration: "1e9d" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"NaNd", 0, `not a duration: "NaNd" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"7 days", 0, `not a duration: "7 days" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
		{"1w", 0, `not a duration: "1w" (write 30m, 2h, 7d, 1.5d or 3d12h)`},
	}
	for _, tc := range tests {
		got, err := policy.ParseDuration(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || !errors.Is(err, policy.ErrBadDuration) {
				t.Errorf("%q: %v; want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %v %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseDuration checks that no input panics and that an accepted one is
// never negative.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"7d", "1.5d", "90m", "-1h", "1e308d", "NaNd", "Infd", "9223372036854775807ns", "d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := policy.ParseDuration(s); err == nil && d < 0 {
			t.Errorf("%q: %v", s, d)
		}
	})
}
