package install_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store"
)

var fetchedAt = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// gitRepo makes a repository with a skill at skills/pdf-tools and returns
// its path; commit adds a commit with files and returns its id.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "skills.git")}
	r.git("init", "-q", "-b", "main", r.dir)
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *gitRepo) commit(files map[string]string, links map[string]string) string {
	r.t.Helper()
	for p, c := range files {
		fp := filepath.Join(r.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(c), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	for p, target := range links {
		if err := os.Symlink(target, filepath.Join(r.dir, filepath.FromSlash(p))); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("-C", r.dir, "add", "-A")
	r.git("-C", r.dir, "commit", "-q", "-m", "change")
	return r.git("-C", r.dir, "rev-parse", "HEAD")
}

const pdfSkill = "---\nname: pdf-tools\ndescription: Works with PDF files.\n---\n\n# PDF tools\n"

func TestFetchGit(t *testing.T) {
	t.Parallel()
	repo := newGitRepo(t)
	first := repo.commit(map[string]string{"skills/pdf-tools/SKILL.md": pdfSkill, "skills/pdf-tools/references/forms.md": "Forms.\n", "README.md": "repo\n"}, nil)
	repo.git("-C", repo.dir, "tag", "v1")
	second := repo.commit(map[string]string{"skills/pdf-tools/references/forms.md": "Forms, changed.\n"}, nil)
	repo.commit(map[string]string{"skills/linked/SKILL.md": "---\nname: linked\ndescription: Has a link.\n---\n"}, map[string]string{"skills/linked/secret": "/etc/passwd"})

	// The same repository over loopback HTTP, served by git http-backend.
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Skip("git http-backend is not installed")
	}
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(repo.dir), "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	fileURL := "file://" + repo.dir
	httpURL := "git+" + srv.URL + "/skills.git"

	for _, tc := range []struct {
		name   string
		src    install.Source
		commit string
		forms  string
	}{
		{"file branch", install.Source{Location: fileURL, Ref: "main", Path: "skills/pdf-tools"}, "", "Forms, changed.\n"},
		{"file tag", install.Source{Location: fileURL, Ref: "v1", Path: "skills/pdf-tools/"}, first, "Forms.\n"},
		{"file commit", install.Source{Location: fileURL, Ref: second, Path: "skills/pdf-tools"}, second, "Forms, changed.\n"},
		{"http branch", install.Source{Location: httpURL, Ref: "v1", Path: "skills/pdf-tools"}, first, "Forms.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, prov, err := install.Fetch(context.Background(), tc.src, install.SourceLimits{}, fetchedAt)
			if err != nil {
				t.Fatal(err)
			}
			if tree.Name != "pdf-tools" || string(tree.Files["SKILL.md"]) != pdfSkill || string(tree.Files["references/forms.md"]) != tc.forms || len(tree.Files) != 2 {
				t.Fatalf("tree %s: %v", tree.Name, keys(tree.Files))
			}
			wantCommit := tc.commit
			if wantCommit == "" {
				wantCommit = repo.git("-C", repo.dir, "rev-parse", "main")
			}
			if prov.Kind != "git" || prov.Source != tc.src.Location || prov.Ref != tc.src.Ref || prov.Commit != wantCommit || prov.Path != "skills/pdf-tools" || !prov.FetchedAt.Equal(fetchedAt) {
				t.Fatalf("provenance %+v", prov)
			}
		})
	}

	for _, tc := range []struct {
		name string
		src  install.Source
		msg  string
	}{
		{"link in the tree", install.Source{Location: fileURL, Ref: "main", Path: "skills/linked"}, `entry "secret" is a link; an installable skill holds regular files only`},
		{"missing path", install.Source{Location: fileURL, Ref: "main", Path: "skills/nope"}, `has no directory "skills/nope" at `},
		{"missing ref", install.Source{Location: fileURL, Ref: "nope", Path: "skills/pdf-tools"}, "fetching nope of " + fileURL + ": "},
		{"option as ref", install.Source{Location: fileURL, Ref: "--upload-pack=touch /tmp/x"}, `--ref "--upload-pack=touch /tmp/x" is not a branch, tag or commit name`},
		{"dotdot path", install.Source{Location: fileURL, Ref: "main", Path: "skills/../.."}, `--path "skills/../..": give a relative path inside the repository`},
		{"credentials in URL", install.Source{Location: "git+https://user:pw@example.com/r.git"}, "https://example.com/r.git: credentials in a source URL are not accepted"},
		{"plain http to a remote host", install.Source{Location: "git+http://example.com/r.git"}, "http://example.com/r.git: plain http is only for loopback hosts; use https"},
		{"sha256 for git", install.Source{Location: fileURL, SHA256: strings.Repeat("a", 64)}, "--sha256 is for archives; a git source is pinned by its commit"},
		{"ftp", install.Source{Location: "git+ftp://example.com/r.git"}, "use https or http or file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := install.Fetch(context.Background(), tc.src, install.SourceLimits{}, fetchedAt)
			if !errors.Is(err, install.ErrInvalidSource) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Fetch error = %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestFetchArchiveURL(t *testing.T) {
	t.Parallel()
	archive := tarGz(t, []entry{{name: "pdf-tools/SKILL.md", body: pdfSkill}, {name: "pdf-tools/notes.md", body: "n\n"}})
	sum := sha256.Sum256(archive)
	good := hex.EncodeToString(sum[:])
	mux := http.NewServeMux()
	mux.HandleFunc("/pdf-tools.tar.gz", func(w http.ResponseWriter, _ *http.Request) { w.Write(archive) })
	mux.HandleFunc("/moved.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/x.tar.gz", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	tree, prov, err := install.Fetch(context.Background(), install.Source{Location: srv.URL + "/pdf-tools.tar.gz", SHA256: good}, install.SourceLimits{}, fetchedAt)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Name != "pdf-tools" || len(tree.Files) != 2 || prov.Kind != "url" || prov.SHA256 != good || prov.Source != srv.URL+"/pdf-tools.tar.gz" {
		t.Fatalf("tree %s %v, provenance %+v", tree.Name, keys(tree.Files), prov)
	}
	wrong := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name string
		src  install.Source
		msg  string
	}{
		{"digest differs", install.Source{Location: srv.URL + "/pdf-tools.tar.gz", SHA256: wrong}, srv.URL + "/pdf-tools.tar.gz has SHA-256 " + good + ", not the expected " + wrong + "; nothing was installed"},
		{"no digest", install.Source{Location: srv.URL + "/pdf-tools.tar.gz"}, "an archive URL needs --sha256 HEX, the SHA-256 you expect of it (sha256sum prints it)"},
		{"bad digest", install.Source{Location: srv.URL + "/pdf-tools.tar.gz", SHA256: "ABC"}, `--sha256 "ABC": give 64 lower-case hexadecimal digits`},
		{"not an archive", install.Source{Location: srv.URL + "/pdf-tools", SHA256: good}, "the URL must name a .tar.gz, .tgz or .zip archive"},
		{"missing", install.Source{Location: srv.URL + "/nope.zip", SHA256: good}, "404 Not Found"},
		{"redirect elsewhere", install.Source{Location: srv.URL + "/moved.tar.gz", SHA256: good}, "ftp://example.com/x.tar.gz: use http or https"},
		{"ref for an archive", install.Source{Location: srv.URL + "/pdf-tools.tar.gz", SHA256: good, Ref: "main"}, "--ref and --path are for git sources"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := install.Fetch(context.Background(), tc.src, install.SourceLimits{}, fetchedAt)
			if !errors.Is(err, install.ErrInvalidSource) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Fetch error = %v, want %q", err, tc.msg)
			}
		})
	}

	// A local archive is checked against --sha256 too.
	local := filepath.Join(t.TempDir(), "pdf-tools.tar.gz")
	if err := os.WriteFile(local, archive, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, prov, err := install.Fetch(context.Background(), install.Source{Location: local, SHA256: good}, install.SourceLimits{}, fetchedAt); err != nil || prov.Kind != "archive" || prov.SHA256 != good {
		t.Fatalf("local archive: %+v %v", prov, err)
	}
	if _, _, err := install.Fetch(context.Background(), install.Source{Location: local, SHA256: wrong}, install.SourceLimits{}, fetchedAt); err == nil || !strings.Contains(err.Error(), "not the expected "+wrong) {
		t.Fatalf("local archive with another digest: %v", err)
	}
}

// TestInstallFromGitRecordsProvenance: an install from a git source
// records where it came from, and review shows it.
func TestInstallFromGitRecordsProvenance(t *testing.T) {
	t.Parallel()
	repo := newGitRepo(t)
	commit := repo.commit(map[string]string{"skills/pdf-tools/SKILL.md": pdfSkill}, nil)
	e := newEnv(t, install.Options{})
	r, err := e.svc.InstallFrom(context.Background(), install.Source{Location: "file://" + repo.dir, Ref: "main", Path: "skills/pdf-tools"}, "operator", install.Introspection{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Provenance == nil || r.Provenance.Commit != commit || r.Provenance.Digest != r.Digest || r.Stale {
		t.Fatalf("review provenance %+v (stale %v), digest %s", r.Provenance, r.Stale, r.Digest)
	}
	want := "source: git file://" + repo.dir + " ref main commit " + commit + " path skills/pdf-tools, fetched "
	if !strings.Contains(r.Text(), want) {
		t.Fatalf("review text lacks %q:\n%s", want, r.Text())
	}
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestRefusalsAudited: installs refused for what their source held are
// in the audit log, with the reason and the source without credentials.
func TestRefusalsAudited(t *testing.T) {
	t.Parallel()
	archive := tarGz(t, []entry{{name: "pdf-tools/SKILL.md", body: pdfSkill}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(archive) }))
	t.Cleanup(srv.Close)
	e := newEnv(t, install.Options{})
	svc, err := install.New(install.Options{Store: e.db, Root: filepath.Join(e.data, "imported2"), Audit: e.db})
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("0", 64)
	_, err = svc.InstallFrom(context.Background(), install.Source{Location: srv.URL + "/pdf-tools.tar.gz", SHA256: wrong}, "operator:ana", install.Introspection{})
	if !errors.Is(err, install.ErrInvalidSource) {
		t.Fatal(err)
	}
	recs, err := e.db.AuditRecords(context.Background(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Action != "install.refused" || recs[0].Actor != "operator:ana" || recs[0].Subject != srv.URL+"/pdf-tools.tar.gz" ||
		!strings.Contains(recs[0].Reasons[0], "not the expected "+wrong) {
		t.Fatalf("audit records %+v", recs)
	}
}
