package bucket_test

import (
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
