package skill_test

import (
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
)

func TestDigestHex(t *testing.T) {
	h := strings.Repeat("0a", 32)
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"sha256:" + h, h, true},
		{skill.FileDigest([]byte("x")), strings.TrimPrefix(skill.FileDigest([]byte("x")), "sha256:"), true},
		{h, "", false},
		{"sha256:" + strings.ToUpper(h), "", false},
		{"sha256:" + h[:63], "", false},
		{"sha256:" + h + "/..", "", false},
		{"sha512:" + h, "", false},
	} {
		if got, ok := skill.DigestHex(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("DigestHex(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
