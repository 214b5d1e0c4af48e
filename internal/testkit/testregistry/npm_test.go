package testregistry_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/testregistry"
)

// echoPackage is an npm package holding an echo server named name.
func echoPackage(name, version string) testregistry.NPMPackage {
	return testregistry.NPMPackage{
		Name: name, Version: version,
		Files: map[string]string{"index.js": testregistry.MCPServerJS(name, "echo"), "README.md": "# " + name + "\n"},
		Bin:   map[string]string{"echo-mcp": "index.js"},
	}
}

// npmClient returns a function running the real npm with a clean
// environment (PATH and a private HOME), skipping t when npm is not
// installed.
func npmClient(t *testing.T) func(limit time.Duration, args ...string) (string, error) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	env := cleanEnv(t)
	return func(limit time.Duration, args ...string) (string, error) {
		t.Helper()
		return run(t, env, limit, append([]string{npm}, args...)...)
	}
}

// npmInstall is the command line of an npm install of specs into prefix,
// with cache, from registry.
func npmInstall(prefix, cache, registry string, specs ...string) []string {
	return append([]string{"install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier",
		"--prefix", prefix, "--cache", cache, "--registry", registry}, specs...)
}

// lockPackage is an entry of package-lock.json's "packages".
type lockPackage struct {
	Version   string `json:"version"`
	Resolved  string `json:"resolved"`
	Integrity string `json:"integrity"`
}

func readLock(t *testing.T, prefix string) map[string]lockPackage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(prefix, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]lockPackage `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	return lock.Packages
}

// TestNPMInstall installs an echo server, plain and scoped, with the real
// npm, runs it and installs it again offline from npm's cache.
func TestNPMInstall(t *testing.T) {
	npm := npmClient(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	r := testregistry.NewNPM(t)
	r.Add(echoPackage("echo-mcp", "1.0.0"))
	r.Add(echoPackage("echo-mcp", "1.1.0"))
	r.Add(echoPackage("@acme/echo-mcp", "2.0.0"))
	for _, tc := range []struct{ name, version string }{{"echo-mcp", "1.0.0"}, {"@acme/echo-mcp", "2.0.0"}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix, cache := t.TempDir(), t.TempDir()
			if out, err := npm(30*time.Second, npmInstall(prefix, cache, r.URL(), tc.name+"@"+tc.version)...); err != nil {
				t.Fatalf("npm install: %v\n%s", err, out)
			}
			got := readLock(t, prefix)["node_modules/"+tc.name]
			want := lockPackage{
				Version:   tc.version,
				Resolved:  r.URL() + tc.name + "/-/" + filepath.Base(tc.name) + "-" + tc.version + ".tgz",
				Integrity: r.Integrity(tc.name, tc.version),
			}
			if got != want || !strings.HasPrefix(want.Integrity, "sha512-") {
				t.Errorf("package-lock.json has %+v, want %+v", got, want)
			}
			entry := filepath.Join(prefix, "node_modules", tc.name, "index.js")
			if fi, err := os.Stat(entry); err != nil || fi.Mode().Perm()&0o111 == 0 {
				t.Errorf("entry point: %v, %v (want executable)", fi, err)
			}
			if target, err := os.Readlink(filepath.Join(prefix, "node_modules", ".bin", "echo-mcp")); err != nil || !strings.HasSuffix(target, filepath.Join(tc.name, "index.js")) {
				t.Errorf(".bin/echo-mcp → %q, %v", target, err)
			}
			converse(t, cleanEnv(t), conversation, answers(tc.name), node, entry)

			// Offline, from the cache alone: no request reaches the registry.
			before := len(r.Requests())
			again := t.TempDir()
			if out, err := npm(30*time.Second, append(npmInstall(again, cache, r.URL(), tc.name+"@"+tc.version), "--offline")...); err != nil {
				t.Fatalf("npm install --offline: %v\n%s", err, out)
			}
			if after := r.Requests(); len(after) != before {
				t.Errorf("offline install requested %q", after[before:])
			}
		})
	}
	reqs := r.Requests()
	for _, p := range []string{"/echo-mcp", "/echo-mcp/-/echo-mcp-1.0.0.tgz", "/@acme/echo-mcp", "/@acme/echo-mcp/-/echo-mcp-2.0.0.tgz"} {
		if !slices.Contains(reqs, p) {
			t.Errorf("requests %q lack %s", reqs, p)
		}
	}
}

// TestNPMTamper checks that npm refuses a tarball whose bytes differ from
// the integrity its packument announces.
func TestNPMTamper(t *testing.T) {
	npm := npmClient(t)
	r := testregistry.NewNPM(t)
	p := echoPackage("echo-mcp", "1.0.0")
	p.Tamper = true
	r.Add(p)
	prefix := t.TempDir()
	// npm takes EINTEGRITY for a corrupted download and fetches again,
	// backing off (over two minutes in all, by default):
	// --fetch-retries=0 leaves the three immediate tries of its tarball
	// fetcher (two of which reach the registry).
	before := len(r.Requests())
	out, err := npm(30*time.Second, append(npmInstall(prefix, t.TempDir(), r.URL(), "echo-mcp@1.0.0"), "--fetch-retries=0")...)
	if err == nil {
		t.Fatalf("npm install of a tampered package succeeded:\n%s", out)
	}
	if !strings.Contains(out, "EINTEGRITY") || !strings.Contains(out, r.Integrity("echo-mcp", "1.0.0")) {
		t.Errorf("npm install failed without EINTEGRITY and the announced integrity:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "echo-mcp")); err == nil {
		t.Error("the tampered package was installed")
	}
	tarballs := 0
	for _, p := range r.Requests()[before:] {
		if p == "/echo-mcp/-/echo-mcp-1.0.0.tgz" {
			tarballs++
		}
	}
	if tarballs == 0 || tarballs > 3 {
		t.Errorf("npm fetched the tampered tarball %d times, want 1 to 3: %q\n%s", tarballs, r.Requests()[before:], out)
	}
}

// TestNPMDependency installs a package whose dependency, in the same
// registry, resolves to the highest version in its range.
func TestNPMDependency(t *testing.T) {
	npm := npmClient(t)
	r := testregistry.NewNPM(t)
	for _, v := range []string{"1.0.0", "1.2.0", "2.0.0", "1.10.0-rc.1"} {
		r.Add(testregistry.NPMPackage{Name: "echo-lib", Version: v, Files: map[string]string{"index.js": "module.exports = '" + v + "';\n"}})
	}
	r.Add(testregistry.NPMPackage{
		Name: "echo-app", Version: "1.0.0",
		Files:        map[string]string{"index.js": "#!/usr/bin/env node\nconsole.log(require('echo-lib'));\n"},
		Bin:          map[string]string{"echo-app": "index.js"},
		Dependencies: map[string]string{"echo-lib": "^1.0.0"},
		Scripts:      map[string]string{"postinstall": "node -e \"require('fs').writeFileSync('ran', '')\""},
	})
	prefix := t.TempDir()
	if out, err := npm(30*time.Second, npmInstall(prefix, t.TempDir(), r.URL(), "echo-app")...); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	lock := readLock(t, prefix)
	if got := lock["node_modules/echo-app"].Version; got != "1.0.0" {
		t.Errorf("echo-app %q, want 1.0.0", got)
	}
	if got := lock["node_modules/echo-lib"]; got.Version != "1.2.0" || got.Integrity != r.Integrity("echo-lib", "1.2.0") {
		t.Errorf("echo-lib %+v, want 1.2.0", got)
	}
	if out, err := run(t, cleanEnv(t), 10*time.Second, filepath.Join(prefix, "node_modules", ".bin", "echo-app")); err != nil || out != "1.2.0\n" {
		t.Errorf("echo-app printed %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "echo-app", "ran")); err == nil {
		t.Error("the postinstall script ran despite --ignore-scripts")
	}
}

// TestNPMMissing checks npm's failures on a version or a package the
// registry lacks, and on a registry that does not answer.
func TestNPMMissing(t *testing.T) {
	npm := npmClient(t)
	r := testregistry.NewNPM(t)
	r.Add(echoPackage("echo-mcp", "1.0.0"))
	out, err := npm(30*time.Second, npmInstall(t.TempDir(), t.TempDir(), r.URL(), "echo-mcp@9.9.9")...)
	if err == nil || !strings.Contains(out, "ETARGET") || !strings.Contains(out, "No matching version found for echo-mcp@9.9.9.") {
		t.Errorf("npm install of a missing version: %v\n%s", err, out)
	}
	out, err = npm(30*time.Second, npmInstall(t.TempDir(), t.TempDir(), r.URL(), "no-such-mcp")...)
	if err == nil || !strings.Contains(out, "npm error code E404") || !strings.Contains(out, "404 Not Found - GET "+r.URL()+"no-such-mcp - Not found") {
		t.Errorf("npm install of a missing package: %v\n%s", err, out)
	}
	// Refused connections are retried with back-off too (over a minute
	// by default).
	start := time.Now()
	out, err = npm(30*time.Second, append(npmInstall(t.TempDir(), t.TempDir(), "http://127.0.0.1:1/", "echo-mcp@1.0.0"), "--fetch-retries=0")...)
	if err == nil || !strings.Contains(out, "npm error code ECONNREFUSED") ||
		!strings.Contains(out, "request to http://127.0.0.1:1/echo-mcp failed, reason: connect ECONNREFUSED 127.0.0.1:1") {
		t.Errorf("npm install from an unreachable registry: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("npm took %v to fail with --fetch-retries=0", d)
	}
}

// TestNPMServe checks the registry's documents and tarballs without npm.
func TestNPMServe(t *testing.T) {
	r := testregistry.NewNPM(t)
	p := echoPackage("@acme/echo-mcp", "1.0.0")
	p.Scripts = map[string]string{"postinstall": "node install.js", "test": "true"}
	p.Type = "module"
	p.Dependencies = map[string]string{"dep": "^1"}
	r.Add(p)
	r.Add(echoPackage("@acme/echo-mcp", "0.9.0"))
	tampered := echoPackage("tampered", "1.0.0")
	tampered.Tamper = true
	r.Add(tampered)

	get := func(path, accept string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", r.URL()+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	type manifest struct {
		Name             string            `json:"name"`
		Version          string            `json:"version"`
		Type             string            `json:"type"`
		Bin              map[string]string `json:"bin"`
		Scripts          map[string]string `json:"scripts"`
		Dependencies     map[string]string `json:"dependencies"`
		HasInstallScript bool              `json:"hasInstallScript"`
		Dist             struct {
			Tarball, Integrity, Shasum string
		} `json:"dist"`
	}
	type packument struct {
		Name     string              `json:"name"`
		DistTags map[string]string   `json:"dist-tags"`
		Versions map[string]manifest `json:"versions"`
		Time     map[string]string   `json:"time"`
	}
	var docs []string
	for _, tc := range []struct{ path, accept string }{
		{"@acme%2fecho-mcp", ""}, {"@acme%2Fecho-mcp", "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"}, {"@acme/echo-mcp", ""},
	} {
		code, b := get(tc.path, tc.accept)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", tc.path, code, b)
		}
		docs = append(docs, string(b))
	}
	if docs[0] != docs[1] || docs[0] != docs[2] {
		t.Errorf("the packument differs by path or Accept: %s", docs)
	}
	var doc packument
	if err := json.Unmarshal([]byte(docs[0]), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Versions["1.0.0"]
	if doc.Name != "@acme/echo-mcp" || doc.DistTags["latest"] != "1.0.0" || len(doc.Versions) != 2 ||
		doc.Time["1.0.0"] == "" || doc.Time["created"] == "" || doc.Time["modified"] == "" {
		t.Errorf("packument %+v", doc)
	}
	if m.Name != "@acme/echo-mcp" || m.Version != "1.0.0" || m.Type != "module" || m.Bin["echo-mcp"] != "index.js" ||
		m.Scripts["postinstall"] != "node install.js" || m.Dependencies["dep"] != "^1" || !m.HasInstallScript ||
		m.Dist.Tarball != r.URL()+"@acme/echo-mcp/-/echo-mcp-1.0.0.tgz" || m.Dist.Integrity != r.Integrity("@acme/echo-mcp", "1.0.0") ||
		len(m.Dist.Shasum) != 40 {
		t.Errorf("manifest %+v", m)
	}
	if doc.Versions["0.9.0"].HasInstallScript {
		t.Error("0.9.0 has no install script")
	}

	code, tgz := get("@acme/echo-mcp/-/echo-mcp-1.0.0.tgz", "")
	if sum := sha512.Sum512(tgz); code != 200 || "sha512-"+base64.StdEncoding.EncodeToString(sum[:]) != m.Dist.Integrity {
		t.Fatalf("tarball: %d, integrity differs", code)
	}
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var entries []string
	var pkgJSON map[string]any
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, h.Name+" "+os.FileMode(h.Mode).String())
		if h.Name == "package/package.json" {
			if err := json.NewDecoder(tr).Decode(&pkgJSON); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := []string{"package/package.json -rw-r--r--", "package/README.md -rw-r--r--", "package/index.js -rwxr-xr-x"}; !slices.Equal(entries, want) {
		t.Errorf("tarball entries %q, want %q", entries, want)
	}
	if pkgJSON["name"] != "@acme/echo-mcp" || pkgJSON["version"] != "1.0.0" || pkgJSON["type"] != "module" || pkgJSON["scripts"] == nil {
		t.Errorf("package.json %v", pkgJSON)
	}

	_, tb := get("tampered", "")
	var td packument
	if err := json.Unmarshal(tb, &td); err != nil {
		t.Fatal(err)
	}
	_, tgz = get("tampered/-/tampered-1.0.0.tgz", "")
	if sum := sha512.Sum512(tgz); "sha512-"+base64.StdEncoding.EncodeToString(sum[:]) == td.Versions["1.0.0"].Dist.Integrity {
		t.Error("the tampered tarball matches its integrity")
	}
	if _, err := gzip.NewReader(bytes.NewReader(tgz)); err != nil {
		t.Errorf("the tampered tarball is not gzip: %v", err)
	}

	for _, path := range []string{"nope", "@acme/echo-mcp/-/echo-mcp-3.0.0.tgz", "nope/-/nope-1.0.0.tgz"} {
		if code, b := get(path, ""); code != 404 || string(b) != `{"error":"Not found"}` {
			t.Errorf("GET %s: %d %s", path, code, b)
		}
	}
	if got := r.Requests(); len(got) != 9 || got[0] != "/@acme/echo-mcp" || got[8] != "/nope/-/nope-1.0.0.tgz" {
		t.Errorf("requests %q", got)
	}
}
