package bucket_test

import (
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/bucket"
)

func TestLayout(t *testing.T) {
	tests := []struct {
		fn      func() (string, error)
		want    string
		wantErr string
	}{
		{func() (string, error) { return bucket.SkillPrefix("acme", "escrituras", "compraventa") }, "acme/skills/escrituras/compraventa/", ""},
		{func() (string, error) { return bucket.SkillPrefix("acme", "", "hipoteca") }, "acme/skills/hipoteca/", ""},
		{func() (string, error) { return bucket.TenantSkillsPrefix("acme") }, "acme/skills/", ""},
		{func() (string, error) { return bucket.WorkspacePrefix("acme", "s-1") }, "acme/sessions/s-1/workspace/", ""},
		{func() (string, error) { return bucket.SkillPrefix("", "c", "n") }, "", "blob: invalid key: tenant is empty"},
		{func() (string, error) { return bucket.SkillPrefix("acme", "a/b", "n") }, "", `blob: invalid key: category "a/b" must be a single segment (no slash)`},
		{func() (string, error) { return bucket.SkillPrefix("acme", "c", "..") }, "", `name: blob: invalid key: ".." has a ".." segment`},
		{func() (string, error) { return bucket.SkillPrefix("acme", "c", "") }, "", "blob: invalid key: name is empty"},
		{func() (string, error) { return bucket.WorkspacePrefix("acme", "s\x00") }, "", `session id: blob: invalid key: "s\x00" contains a control character`},
	}
	for i, tc := range tests {
		got, err := tc.fn()
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.wantErr {
			t.Errorf("case %d = %q, %q; want %q, %q", i, got, gotErr, tc.want, tc.wantErr)
		}
	}
}

func TestMirrorTree(t *testing.T) {
	for _, tc := range []struct{ digest, tree, marker, err string }{
		{"sha256:" + strings.Repeat("ab", 32), "_mirror/trees/" + strings.Repeat("ab", 32) + "/", "_mirror/trees/" + strings.Repeat("ab", 32) + ".tree", ""},
		{"sha256:../x", "", "", `blob: invalid key: digest "sha256:../x" is not sha256:<64 hex digits>`},
		{"md5:" + strings.Repeat("ab", 32), "", "", `blob: invalid key: digest "md5:` + strings.Repeat("ab", 32) + `" is not sha256:<64 hex digits>`},
	} {
		tree, marker, err := bucket.MirrorTree(bucket.DefaultMirrorPrefix, tc.digest)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if tree != tc.tree || marker != tc.marker || gotErr != tc.err {
			t.Errorf("MirrorTree(%q) = %q, %q, %q; want %q, %q, %q", tc.digest, tree, marker, gotErr, tc.tree, tc.marker, tc.err)
		}
	}
}
