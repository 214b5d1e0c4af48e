package app

import (
	"os"
	"path/filepath"
	"testing"
)

// TestParseRepoSource: the SOURCE forms of 'skillgate add' and the
// repository, ref and folder each names.
func TestParseRepoSource(t *testing.T) {
	local := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		src, ref, path string
		want           RepoSource
		err            string
	}{
		{src: "acme/skills", want: RepoSource{Location: "git+https://github.com/acme/skills.git"}},
		{src: "acme/skills.git", want: RepoSource{Location: "git+https://github.com/acme/skills.git"}},
		{src: "acme/skills/legal/contratos@v1.2", want: RepoSource{Location: "git+https://github.com/acme/skills.git", Path: "legal/contratos", Ref: "v1.2"}},
		{src: "acme/skills@main", want: RepoSource{Location: "git+https://github.com/acme/skills.git", Ref: "main"}},
		{src: "acme/skills@main", ref: "dev", path: "x/", want: RepoSource{Location: "git+https://github.com/acme/skills.git", Ref: "dev", Path: "x"}},
		{src: "github:acme/skills/x", want: RepoSource{Location: "git+https://github.com/acme/skills.git", Path: "x"}},
		{src: "gitlab:acme/skills/x@v2", want: RepoSource{Location: "git+https://gitlab.com/acme/skills.git", Path: "x", Ref: "v2"}},
		{src: "https://git.example.com/team/skills.git", want: RepoSource{Location: "git+https://git.example.com/team/skills.git"}},
		{src: "https://git.example.com/team/skills.git/tools/pdf@v3", want: RepoSource{Location: "git+https://git.example.com/team/skills.git", Path: "tools/pdf", Ref: "v3"}},
		{src: "https://github.com/acme/skills/tree/main/legal/contratos", want: RepoSource{Location: "git+https://github.com/acme/skills.git", Ref: "main", Path: "legal/contratos"}},
		{src: "https://github.com/acme/skills/tree/v1", want: RepoSource{Location: "git+https://github.com/acme/skills.git", Ref: "v1"}},
		{src: "https://gitlab.com/acme/skills/-/tree/main/x", want: RepoSource{Location: "git+https://gitlab.com/acme/skills.git", Ref: "main", Path: "x"}},
		{src: "https://github.com/acme/skills", want: RepoSource{Location: "git+https://github.com/acme/skills"}},
		{src: "git+http://127.0.0.1:8080/skills.git@main", want: RepoSource{Location: "git+http://127.0.0.1:8080/skills.git", Ref: "main"}},
		{src: "file:///srv/skills.git", ref: "v1", path: "a", want: RepoSource{Location: "file:///srv/skills.git", Ref: "v1", Path: "a"}},
		{src: local, want: RepoSource{Location: "file://" + local}},
		{src: "./repo", want: RepoSource{Location: "file://" + filepath.Join(wd, "repo")}},
		{src: "git@github.com:acme/skills.git", err: "add: git@github.com:acme/skills.git: SSH sources are not fetched; use the repository's https:// URL"},
		{src: "ssh://git@host/skills.git", err: "add: ssh://git@host/skills.git: SSH sources are not fetched; use the repository's https:// URL"},
		{src: "skills", err: `add: "skills" is not OWNER/REPO[/PATH][@REF], gitlab:OWNER/REPO…, a git URL or a local repository`},
		{src: "gitlab:acme", err: `add: "gitlab:acme" is not OWNER/REPO[/PATH][@REF], gitlab:OWNER/REPO…, a git URL or a local repository`},
	}
	for _, tc := range tests {
		got, err := ParseRepoSource(tc.src, tc.ref, tc.path)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case got != tc.want:
			t.Errorf("%s: %+v, want %+v", tc.src, got, tc.want)
		}
	}
}
