package plural_test

import (
	"testing"

	"github.com/skillgate/skillgate/internal/platform/plural"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		n         int
		one, many string
		want      string
	}{
		{0, "skill", "skills", "0 skills"},
		{1, "skill", "skills", "1 skill"},
		{2, "skill", "skills", "2 skills"},
		{1, "policy", "policies", "1 policy"},
		{3, "policy", "policies", "3 policies"},
		{-1, "byte", "bytes", "-1 byte"},
	} {
		if got := plural.Of(tc.n, tc.one, tc.many); got != tc.want {
			t.Errorf("Of(%d, %q, %q) = %q, want %q", tc.n, tc.one, tc.many, got, tc.want)
		}
	}
}
