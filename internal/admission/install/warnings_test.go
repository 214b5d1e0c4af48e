package install_test

import (
	"context"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
)

// TestImportedSkillWarnings: managed storage keeps every version's tree in
// a directory named "skill"; the review's warnings must be the skill's own
// (here an unknown frontmatter field), never "Directory name 'skill' must
// match skill name".
func TestImportedSkillWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       string
	}{
		{"clean", "---\nClean.\n", `null`},
		{"author", "author: ana\n---\nHas an author field.\n",
			`["unknown frontmatter field 'author' was kept; move it under metadata: to follow the specification"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t, install.Options{})
			src := writeSkill(t, t.TempDir(), tc.name, tc.body, nil)
			r, err := e.svc.Install(ctx, src, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, r.Skill.Warnings); got != tc.want {
				t.Errorf("warnings %s, want %s", got, tc.want)
			}
			if r, err = e.svc.Review(ctx, tc.name); err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, r.Skill.Warnings); got != tc.want {
				t.Errorf("review warnings %s, want %s", got, tc.want)
			}
		})
	}
}
