package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrBadDuration is returned by [ParseDuration] for text that is not a
// duration operators may write.
var ErrBadDuration = errors.New("not a duration")

// ParseDuration reads a duration as operators write it for grant expiries
// (`grant add --expires 7d`, the REST "expires") and audit windows
// (`audit query --since 7d`): a Go duration ("90m", "2h30m"), a number of
// days ("7d", "1.5d"), or days and a Go duration ("3d12h"). It is the one parser for both, so that what one
// accepts the other does. Negative durations are refused: every use means
// "this long from now" or "this long ago".
func ParseDuration(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %q (write 30m, 2h, 7d, 1.5d or 3d12h)", ErrBadDuration, s)
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, error) {
	// Go's units (ns, us, µs, ms, s, m, h) have no d: the first one ends
	// the days.
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	n, err := strconv.ParseFloat(days, 64)
	// 100,000 days is far beyond any expiry or audit window and well
	// within time.Duration (about 290 years).
	if err != nil || days == "" || days[0] == '+' || n != n || n < 0 || n > 100_000 {
		return 0, ErrBadDuration
	}
	d := time.Duration(n * float64(24*time.Hour))
	if rest == "" {
		return d, nil
	}
	r, err := time.ParseDuration(rest)
	if err != nil || rest[0] == '-' || rest[0] == '+' {
		return 0, ErrBadDuration
	}
	return d + r, nil
}
