package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/model/lockfile"
)

// TestSupplyChainRemoteSources is issue 16's acceptance run: a git
// repository served over loopback HTTP by git http-backend holds real
// skills of the corpus and a skill backed by npm server-memory (declared
// with npx, fetched at install), and a loopback HTTP server offers another
// corpus skill as an archive. They are installed with their provenance,
// approved, enabled and locked; the lock
// verifies and reproduces the installs on a fresh data directory; the
// memory skill is updated with a changed tool list, the review shows the
// comparison, and once approved and enabled the new version serves.
func TestSupplyChainRemoteSources(t *testing.T) {
	corpus := os.Getenv("SKILLGATE_CORPUS")
	if corpus == "" {
		t.Skip("SKILLGATE_CORPUS is unset")
	}
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Skip("git http-backend is not installed")
	}
	needLaunchTools(t, "npm", "node")
	scientific := filepath.Join(corpus, "K-Dense-AI__claude-scientific-skills", "scientific-skills")

	// The publisher's repository: two corpus skills and a memory skill.
	repos := t.TempDir()
	repo := filepath.Join(repos, "skills.git")
	mcpservertest.CopyTree(t, filepath.Join(scientific, "aeon"), filepath.Join(repo, "skills", "aeon"))
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	memServer := map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-memory@2026.8.31"}, "env": map[string]string{"MEMORY_FILE_PATH": memFile}}
	writeMemorySkill(t, filepath.Join(repo, "skills", "memory"), map[string]any{"mem": memServer})
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=Pub", "GIT_AUTHOR_EMAIL=pub@example.com",
			"GIT_COMMITTER_NAME=Pub", "GIT_COMMITTER_EMAIL=pub@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "skills 1.0")
	gitSrv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(gitSrv.Close)
	gitURL := "git+" + gitSrv.URL + "/skills.git"

	// An archive of another corpus skill, with its SHA-256.
	archive := tarGzDir(t, filepath.Join(scientific, "anndata"), "anndata")
	sum := sha256.Sum256(archive)
	archiveSHA := hex.EncodeToString(sum[:])
	archiveSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/anndata.tar.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write(archive)
	}))
	t.Cleanup(archiveSrv.Close)

	f := emptyFixture(t)
	f.run(t, "install", gitURL, "--ref", "main", "--path", "skills/aeon")
	f.run(t, "install", gitURL, "--ref", "main", "--path", "skills/memory")
	f.run(t, "install", archiveSrv.URL+"/anndata.tar.gz", "--sha256", archiveSHA)
	for _, n := range []string{"aeon", "memory", "anndata"} {
		f.run(t, "approve", n)
		f.run(t, "enable", n)
	}
	commit := git("rev-parse", "HEAD")
	if review := f.run(t, "review", "aeon"); !strings.Contains(review, "source: git "+gitURL+" ref main commit "+commit+" path skills/aeon, fetched ") {
		t.Fatalf("review aeon lacks its provenance:\n%s", review)
	}
	if review := f.run(t, "review", "anndata"); !strings.Contains(review, "source: url "+archiveSrv.URL+"/anndata.tar.gz sha256 "+archiveSHA+", fetched ") {
		t.Fatalf("review anndata lacks its provenance:\n%s", review)
	}

	// Lock, verify, and reproduce on a fresh data directory.
	lockPath := filepath.Join(t.TempDir(), "skillgate.lock")
	f.run(t, "lock", "--out", lockPath)
	b, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]lockfile.Entry{}
	for _, e := range l.Skills {
		byKey[e.Key] = e
	}
	if e := byKey["memory"]; e.Origin != "install" || e.Commit != commit || e.Source != gitURL || e.Pins["mem"] == "" {
		t.Fatalf("lock entry of memory: %+v\n%s", e, b)
	}
	if e := byKey["anndata"]; e.ArchiveSHA256 != archiveSHA || e.Source != archiveSrv.URL+"/anndata.tar.gz" {
		t.Fatalf("lock entry of anndata: %+v", e)
	}
	if out := f.run(t, "verify", "--lock", lockPath); !strings.HasPrefix(out, "3 skills match ") {
		t.Fatalf("verify: %s", out)
	}
	fresh := emptyFixture(t)
	out := fresh.run(t, "install", "--locked", lockPath)
	for _, k := range []string{"aeon", "memory", "anndata"} {
		if !strings.Contains(out, k+" "+byKey[k].Digest+": awaiting_approval\n") {
			t.Fatalf("install --locked:\n%s", out)
		}
	}

	// The publisher adds a server to the memory skill: its tool list changes.
	writeMemorySkill(t, filepath.Join(repo, "skills", "memory"), map[string]any{"mem": memServer, "scratch": memServer})
	git("commit", "-q", "-am", "memory 1.1: a scratch memory")
	upd := f.run(t, "update", "memory")
	if !strings.Contains(upd, "compared with "+byKey["memory"].Digest+" (enabled): added [scratch/") || !strings.Contains(upd, "  servers added [scratch], removed []\n") {
		t.Fatalf("update review:\n%s", upd)
	}
	// The approved version still serves; the lock now differs.
	if code, out, _ := f.runCode(t, nil, "verify", "--lock", lockPath); code != 0 {
		t.Fatalf("verify before the update is approved: %d %s", code, out)
	}
	newDigest := strings.Fields(upd)[2]
	ref := "memory@" + strings.TrimPrefix(newDigest, "sha256:")[:12]
	f.run(t, "approve", ref)
	f.run(t, "enable", ref)
	code, out, _ := f.runCode(t, nil, "verify", "--lock", lockPath)
	if code != 1 || !strings.Contains(out, "install memory: digest is "+byKey["memory"].Digest+" in the lock, "+newDigest+" now") {
		t.Fatalf("verify after the update: %d %s", code, out)
	}
	cs := f.agent(t, "T3")
	names := toolNames(t, cs)
	// The scratch server's tools clash with mem's: they are offered under
	// the names fixed at the update's approval.
	if !slices.Contains(names, "create_entities") || !slices.Contains(names, "memory__create_entities") {
		t.Fatalf("the new version's tools are not served: %v", names)
	}
}

// writeMemorySkill writes the memory skill with servers as its mcp.json.
func writeMemorySkill(t *testing.T, dir string, servers map[string]any) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: memory\ndescription: Remember facts with the memory server.\n---\nUse `create_entities` and `read_graph`.\n"
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	for name, content := range map[string]string{"SKILL.md": md, "mcp.json": string(cfg)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tarGzDir archives dir under top/ as a .tar.gz.
func tarGzDir(t *testing.T, dir, top string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}
