package testregistry_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/testregistry"
)

// echoWheel is the wheel of the Python echo server.
func echoWheel(version string) testregistry.Wheel {
	return testregistry.Wheel{
		Name: "echo-mcp", Version: version,
		Files: map[string]string{
			"echo_mcp/__init__.py": "",
			"echo_mcp/server.py":   testregistry.MCPServerPy(),
		},
		ConsoleScripts: map[string]string{"echo-mcp": "echo_mcp.server:main"},
	}
}

// pyString is s as a Python string literal.
func pyString(s string) string { return strconv.Quote(s) }

// pip runs python -m pip install --isolated with args in a clean
// environment.
func pip(t *testing.T, args ...string) (string, error) {
	t.Helper()
	exe := testregistry.Python(t)
	argv := append([]string{exe, "-m", "pip", "install", "--isolated", "--no-cache-dir", "--disable-pip-version-check"}, args...)
	return run(t, cleanEnv(t), 30*time.Second, argv...)
}

// pyServer is the command line running main of echo_mcp.server installed
// in target.
func pyServer(t *testing.T, target string) []string {
	return []string{testregistry.Python(t), "-I", "-c", "import sys; sys.path.insert(0, " + pyString(target) + "); from echo_mcp.server import main; sys.exit(main())"}
}

// TestPipInstall installs the echo server with the real pip and runs it.
func TestPipInstall(t *testing.T) {
	testregistry.Python(t)
	r := testregistry.NewPyPI(t)
	r.Add(echoWheel("1.0.0"))
	r.Add(echoWheel("1.1.0"))
	target := t.TempDir()
	if out, err := pip(t, "--target", target, "--index-url", r.URL(), "echo-mcp==1.0.0"); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(target, "echo_mcp-1.0.0.dist-info", "RECORD")); err != nil {
		t.Error(err)
	}
	if b, err := os.ReadFile(filepath.Join(target, "bin", "echo-mcp")); err != nil || !strings.Contains(string(b), "from echo_mcp.server import main") {
		t.Errorf("console script: %q, %v", b, err)
	}
	converse(t, cleanEnv(t), conversation, answers("echo-mcp"), pyServer(t, target)...)
	// The console script pip wrote from entry_points.txt.
	converse(t, append(cleanEnv(t), "PYTHONPATH="+target), conversation, answers("echo-mcp"), filepath.Join(target, "bin", "echo-mcp"))
	reqs := r.Requests()
	if !slices.Contains(reqs, "/simple/echo-mcp/") || !slices.Contains(reqs, "/files/echo_mcp-1.0.0-py3-none-any.whl") {
		t.Errorf("requests %q", reqs)
	}
}

// TestPipTamper checks that pip refuses a wheel whose bytes do not match
// its link's digest.
func TestPipTamper(t *testing.T) {
	testregistry.Python(t)
	r := testregistry.NewPyPI(t)
	w := echoWheel("1.0.0")
	w.Tamper = true
	r.Add(w)
	target := t.TempDir()
	out, err := pip(t, "--target", target, "--index-url", r.URL(), "echo-mcp==1.0.0")
	if err == nil {
		t.Fatalf("pip install of a tampered wheel succeeded:\n%s", out)
	}
	if !strings.Contains(out, "THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.") {
		t.Errorf("pip install failed without the hash mismatch:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(target, "echo_mcp")); err == nil {
		t.Error("the tampered wheel was installed")
	}
}

// TestPipRequireHashes installs from a requirements file pinning the
// wheel's digest, and fails with a wrong one.
func TestPipRequireHashes(t *testing.T) {
	testregistry.Python(t)
	r := testregistry.NewPyPI(t)
	r.Add(echoWheel("1.0.0"))
	_, data, err := testregistry.BuildWheel(echoWheel("1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	dir := t.TempDir()
	reqs := filepath.Join(dir, "requirements.txt")
	if err := os.WriteFile(reqs, []byte("echo-mcp==1.0.0 --hash=sha256:"+hex.EncodeToString(sum[:])+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	if out, err := pip(t, "--require-hashes", "--target", target, "--index-url", r.URL(), "-r", reqs); err != nil {
		t.Fatalf("pip install --require-hashes: %v\n%s", err, out)
	}
	converse(t, cleanEnv(t), conversation, answers("echo-mcp"), pyServer(t, target)...)

	wrong := filepath.Join(dir, "wrong.txt")
	if err := os.WriteFile(wrong, []byte("echo-mcp==1.0.0 --hash=sha256:"+strings.Repeat("0", 64)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := pip(t, "--require-hashes", "--target", t.TempDir(), "--index-url", r.URL(), "-r", wrong)
	if err == nil || !strings.Contains(out, "THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.") {
		t.Errorf("pip install with a wrong hash: %v\n%s", err, out)
	}
}

// TestPipFindLinks installs from the wheels WriteDir writes, with no
// index.
func TestPipFindLinks(t *testing.T) {
	testregistry.Python(t)
	r := testregistry.NewPyPI(t)
	r.Add(echoWheel("1.0.0"))
	links := t.TempDir()
	if err := r.WriteDir(links); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	if out, err := pip(t, "--no-index", "--find-links", links, "--target", target, "echo-mcp"); err != nil {
		t.Fatalf("pip install --find-links: %v\n%s", err, out)
	}
	converse(t, cleanEnv(t), conversation, answers("echo-mcp"), pyServer(t, target)...)
	if reqs := r.Requests(); len(reqs) != 0 {
		t.Errorf("requests %q", reqs)
	}
}

// TestPipMissing checks pip's failures on a version or a project the
// index lacks, and on an index that does not answer.
func TestPipMissing(t *testing.T) {
	testregistry.Python(t)
	r := testregistry.NewPyPI(t)
	r.Add(echoWheel("1.0.0"))
	out, err := pip(t, "--target", t.TempDir(), "--index-url", r.URL(), "echo-mcp==9.9.9")
	if err == nil || !strings.Contains(out, "ERROR: Could not find a version that satisfies the requirement echo-mcp==9.9.9 (from versions: 1.0.0)\n") ||
		!strings.Contains(out, "ERROR: No matching distribution found for echo-mcp==9.9.9\n") {
		t.Errorf("pip install of a missing version: %v\n%s", err, out)
	}
	out, err = pip(t, "--target", t.TempDir(), "--index-url", r.URL(), "no-such-mcp")
	if err == nil || !strings.Contains(out, "ERROR: Could not find a version that satisfies the requirement no-such-mcp (from versions: none)\n") {
		t.Errorf("pip install of a missing project: %v\n%s", err, out)
	}
	// An index that refuses connections reads as one without the
	// project: pip logs the refusals only as warnings of its retries,
	// which --retries 0 removes.
	out, err = pip(t, "--retries", "0", "--target", t.TempDir(), "--index-url", "http://127.0.0.1:1/simple/", "echo-mcp==1.0.0")
	if err == nil || !strings.Contains(out, "ERROR: Could not find a version that satisfies the requirement echo-mcp==1.0.0 (from versions: none)\n") ||
		strings.Contains(out, "Connection refused") {
		t.Errorf("pip install from an unreachable index: %v\n%s", err, out)
	}
}

// TestBuildWheel checks the wheel's entries and RECORD without pip.
func TestBuildWheel(t *testing.T) {
	w := echoWheel("1.0.0")
	w.Name = "Echo.MCP"
	w.Requires = []string{"anyio>=4", "httpx; extra == 'http'"}
	name, data, err := testregistry.BuildWheel(w)
	if err != nil {
		t.Fatal(err)
	}
	if name != "echo_mcp-1.0.0-py3-none-any.whl" {
		t.Errorf("file name %q", name)
	}
	if _, again, _ := testregistry.BuildWheel(w); !bytes.Equal(data, again) {
		t.Error("BuildWheel is not deterministic")
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
		names = append(names, f.Name)
	}
	const info = "echo_mcp-1.0.0.dist-info/"
	if want := []string{"echo_mcp/__init__.py", "echo_mcp/server.py", info + "METADATA", info + "WHEEL", info + "entry_points.txt", info + "RECORD"}; !slices.Equal(names, want) {
		t.Errorf("entries %q, want %q", names, want)
	}
	if got, want := files[info+"METADATA"], "Metadata-Version: 2.1\nName: Echo.MCP\nVersion: 1.0.0\nRequires-Dist: anyio>=4\nRequires-Dist: httpx; extra == 'http'\n"; got != want {
		t.Errorf("METADATA %q, want %q", got, want)
	}
	if got, want := files[info+"WHEEL"], "Wheel-Version: 1.0\nGenerator: skillgate-testregistry\nRoot-Is-Purelib: true\nTag: py3-none-any\n"; got != want {
		t.Errorf("WHEEL %q", got)
	}
	if got := files[info+"entry_points.txt"]; got != "[console_scripts]\necho-mcp = echo_mcp.server:main\n" {
		t.Errorf("entry_points.txt %q", got)
	}
	lines := strings.Split(strings.TrimSuffix(files[info+"RECORD"], "\n"), "\n")
	if len(lines) != len(names) || lines[len(lines)-1] != info+"RECORD,," {
		t.Fatalf("RECORD %q", lines)
	}
	for _, line := range lines[:len(lines)-1] {
		parts := strings.Split(line, ",")
		sum := sha256.Sum256([]byte(files[parts[0]]))
		if want := parts[0] + ",sha256=" + base64.RawURLEncoding.EncodeToString(sum[:]) + "," + strconv.Itoa(len(files[parts[0]])); line != want {
			t.Errorf("RECORD line %q, want %q", line, want)
		}
	}
	if _, _, err := testregistry.BuildWheel(testregistry.Wheel{Name: "x", Version: "1", Files: map[string]string{"../evil.py": ""}}); err == nil {
		t.Error("BuildWheel took a file outside the wheel")
	}
}

// TestPyPIServe checks the index's pages without pip.
func TestPyPIServe(t *testing.T) {
	r := testregistry.NewPyPI(t)
	r.Add(echoWheel("1.0.0"))
	tw := echoWheel("1.0.0")
	tw.Name, tw.Tamper = "Tampered_Thing", true
	r.Add(tw)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := noRedirect.Get(strings.TrimSuffix(r.URL(), "/simple/") + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Location"), string(b)
	}
	if code, _, body := get("/simple/"); code != 200 || !strings.Contains(body, `<a href="echo-mcp/">echo-mcp</a>`) || !strings.Contains(body, `<a href="tampered-thing/">tampered-thing</a>`) {
		t.Errorf("/simple/: %d %s", code, body)
	}
	_, data, _ := testregistry.BuildWheel(echoWheel("1.0.0"))
	sum := sha256.Sum256(data)
	link := `<a href="../../files/echo_mcp-1.0.0-py3-none-any.whl#sha256=` + hex.EncodeToString(sum[:]) + `">echo_mcp-1.0.0-py3-none-any.whl</a>`
	if code, _, body := get("/simple/echo-mcp/"); code != 200 || !strings.Contains(body, link) || !strings.HasPrefix(body, "<!DOCTYPE html>") {
		t.Errorf("/simple/echo-mcp/: %d %s", code, body)
	}
	for path, to := range map[string]string{"/simple/Echo_MCP/": "/simple/echo-mcp/", "/simple/echo-mcp": "/simple/echo-mcp/", "/simple/tampered.thing/": "/simple/tampered-thing/"} {
		if code, loc, _ := get(path); code != http.StatusMovedPermanently || loc != to {
			t.Errorf("%s: %d → %q, want %s", path, code, loc, to)
		}
	}
	if code, _, body := get("/files/echo_mcp-1.0.0-py3-none-any.whl"); code != 200 || body != string(data) {
		t.Errorf("wheel: %d", code)
	}
	_, _, page := get("/simple/tampered-thing/")
	_, _, served := get("/files/tampered_thing-1.0.0-py3-none-any.whl")
	served256 := sha256.Sum256([]byte(served))
	if !strings.Contains(page, "#sha256=") || strings.Contains(page, hex.EncodeToString(served256[:])) {
		t.Errorf("the tampered wheel matches its link: %s", page)
	}
	for _, path := range []string{"/simple/nope/", "/files/nope.whl", "/other"} {
		if code, _, _ := get(path); code != 404 {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
	dir := t.TempDir()
	if err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "echo_mcp-1.0.0-py3-none-any.whl")); err != nil || !bytes.Equal(b, data) {
		t.Errorf("WriteDir: %v", err)
	}
}
