package testregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// NPM is an npm registry served on loopback: the packuments and tarballs
// of the packages added with [NPM.Add]. Point npm at it with
// --registry [NPM.URL].
type NPM struct {
	server
	tb testing.TB

	mu       sync.Mutex
	packages map[string]*npmEntry // by package name
}

// NPMPackage is one version of a package that [NPM.Add] publishes.
type NPMPackage struct {
	// Name is the package's name, scoped ("@acme/echo-mcp") or not.
	Name string
	// Version is the package's version, x.y.z.
	Version string
	// Files are the files inside the package besides package.json (which
	// the registry writes), by path relative to the package's root.
	Files map[string]string
	// Bin is package.json's "bin": command name → path of a file in
	// Files. Those files are executable (0755) in the tarball.
	Bin map[string]string
	// Dependencies is package.json's "dependencies": name → version
	// range, of other packages in the same registry.
	Dependencies map[string]string
	// Scripts is package.json's "scripts" (e.g. "postinstall": "node
	// install.js"). With preinstall, install or postinstall, the
	// packument's manifest says hasInstallScript.
	Scripts map[string]string
	// Type is package.json's "type": "module", or "" for CommonJS.
	Type string
	// Tamper makes the registry serve a tarball (valid, but with one more
	// file) whose bytes differ from the integrity and shasum the
	// packument announces. npm fails with EINTEGRITY, but takes it for a
	// corrupted download and fetches again with back-off first (over two
	// minutes by default): run it with --fetch-retries=0.
	Tamper bool
}

// npmEntry is a package's versions, in the order added.
type npmEntry struct {
	versions []*npmVersion
}

// npmVersion is one version as served: its manifest in the packument and
// the bytes of its tarball.
type npmVersion struct {
	pkg      NPMPackage
	added    time.Time
	tarball  []byte // the bytes served
	file     string // the tarball's file name, <basename>-<version>.tgz
	manifest map[string]any
}

// packageJSON is the package.json the registry writes into a tarball.
type packageJSON struct {
	Name         string            `json:"name"`
	Version      string            `json:"version"`
	Type         string            `json:"type,omitempty"`
	Bin          map[string]string `json:"bin,omitempty"`
	Scripts      map[string]string `json:"scripts,omitempty"`
	Dependencies map[string]string `json:"dependencies,omitempty"`
}

// npmEpoch is the time of the first version added; each later one is a
// minute later, so that the packument's "time" is stable.
var npmEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// npmTime is the layout of the packument's times, the registry's own
// ("2025-01-01T00:00:00.000Z").
const npmTime = "2006-01-02T15:04:05.000Z07:00"

// tarTime is the modification time of every tarball entry (the one npm
// pack itself writes).
var tarTime = time.Date(1985, 10, 26, 8, 15, 0, 0, time.UTC)

// NewNPM starts an empty npm registry on 127.0.0.1, closed at tb's
// cleanup.
func NewNPM(tb testing.TB) *NPM {
	tb.Helper()
	r := &NPM{tb: tb, packages: map[string]*npmEntry{}}
	r.start(tb, http.HandlerFunc(r.serve))
	return r
}

// URL returns the registry's base URL, with a trailing slash
// ("http://127.0.0.1:PORT/"), as npm's --registry takes it.
func (r *NPM) URL() string { return r.srv.URL + "/" }

// Requests returns the paths requested so far, decoded (a scoped
// packument is "/@scope/name" however npm escaped it), in order.
func (r *NPM) Requests() []string { return r.logged() }

// Add publishes p. Call it several times with one name to publish several
// versions; the dist-tag latest is the highest version added. It fails
// the test when p lacks a name or version, or when that version is
// already published.
func (r *NPM) Add(p NPMPackage) {
	r.tb.Helper()
	if p.Name == "" || p.Version == "" {
		r.tb.Fatalf("testregistry: npm package %q@%q needs a name and a version", p.Name, p.Version)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.packages[p.Name]
	if e == nil {
		e = &npmEntry{}
		r.packages[p.Name] = e
	}
	for _, v := range e.versions {
		if v.pkg.Version == p.Version {
			r.tb.Fatalf("testregistry: npm package %s@%s added twice", p.Name, p.Version)
		}
	}
	announced, err := npmTarball(p, false)
	if err != nil {
		r.tb.Fatalf("testregistry: npm package %s@%s: %v", p.Name, p.Version, err)
	}
	served := announced
	if p.Tamper {
		if served, err = npmTarball(p, true); err != nil {
			r.tb.Fatalf("testregistry: npm package %s@%s: %v", p.Name, p.Version, err)
		}
	}
	n := 0
	for _, e := range r.packages {
		n += len(e.versions)
	}
	v := &npmVersion{
		pkg:     p,
		added:   npmEpoch.Add(time.Duration(n) * time.Minute),
		tarball: served,
		file:    path.Base(p.Name) + "-" + p.Version + ".tgz",
	}
	sha512sum := sha512.Sum512(announced)
	sha1sum := sha1.Sum(announced)
	m := map[string]any{
		"name":    p.Name,
		"version": p.Version,
		"_id":     p.Name + "@" + p.Version,
		"dist": map[string]any{
			"tarball":   r.URL() + p.Name + "/-/" + v.file,
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
			"shasum":    hex.EncodeToString(sha1sum[:]),
		},
	}
	if p.Type != "" {
		m["type"] = p.Type
	}
	if len(p.Bin) > 0 {
		m["bin"] = p.Bin
	}
	if len(p.Scripts) > 0 {
		m["scripts"] = p.Scripts
		for _, s := range []string{"preinstall", "install", "postinstall"} {
			if _, ok := p.Scripts[s]; ok {
				m["hasInstallScript"] = true
			}
		}
	}
	if len(p.Dependencies) > 0 {
		m["dependencies"] = p.Dependencies
	}
	v.manifest = m
	e.versions = append(e.versions, v)
}

// Integrity returns the integrity ("sha512-<base64>") the packument
// announces for name@version, as package-lock.json records it, or "" when
// that version was not added.
func (r *NPM) Integrity(name, version string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v := r.version(name, version); v != nil {
		return v.manifest["dist"].(map[string]any)["integrity"].(string)
	}
	return ""
}

// version returns name@version, or nil. r.mu is held.
func (r *NPM) version(name, version string) *npmVersion {
	if e := r.packages[name]; e != nil {
		for _, v := range e.versions {
			if v.pkg.Version == version {
				return v
			}
		}
	}
	return nil
}

// npmTarball returns the gzip'd tar of p, every entry under package/,
// package.json first. tampered adds one file.
func npmTarball(p NPMPackage, tampered bool) ([]byte, error) {
	pj, err := json.MarshalIndent(packageJSON{
		Name: p.Name, Version: p.Version, Type: p.Type,
		Bin: p.Bin, Scripts: p.Scripts, Dependencies: p.Dependencies,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for name, content := range p.Files {
		name = path.Clean(strings.TrimPrefix(name, "./"))
		if name == "package.json" || name == "." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
			return nil, fmt.Errorf("bad file name %q", name)
		}
		files[name] = content
	}
	if tampered {
		files["tampered.js"] = "// These bytes were not published.\n"
	}
	executable := map[string]bool{}
	for _, target := range p.Bin {
		executable[path.Clean(strings.TrimPrefix(target, "./"))] = true
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, content []byte, mode int64) error {
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: "package/" + name, Size: int64(len(content)),
			Mode: mode, ModTime: tarTime, Format: tar.FormatPAX,
		}); err != nil {
			return err
		}
		_, err := tw.Write(content)
		return err
	}
	if err := add("package.json", append(pj, '\n'), 0o644); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		mode := int64(0o644)
		if executable[name] {
			mode = 0o755
		}
		if err := add(name, []byte(files[name]), mode); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// compareVersions compares two x.y.z versions numerically, part by part;
// a version with a pre-release suffix (-…) sorts before the same version
// without one.
func compareVersions(a, b string) int {
	a, apre, _ := strings.Cut(a, "-")
	b, bpre, _ := strings.Cut(b, "-")
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	switch {
	case apre == bpre:
		return 0
	case apre == "":
		return 1
	case bpre == "":
		return -1
	}
	return strings.Compare(apre, bpre)
}

// serve answers GET /<name> with the packument and
// GET /<name>/-/<file>.tgz with a tarball.
func (r *NPM) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		npmError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	// URL.Path is decoded: /@scope%2fname arrives as /@scope/name.
	name, file, isTarball := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/-/")
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.packages[name]
	if e == nil {
		npmError(w, http.StatusNotFound, "Not found")
		return
	}
	if isTarball {
		for _, v := range e.versions {
			if v.file == file {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Header().Set("Content-Length", strconv.Itoa(len(v.tarball)))
				w.Write(v.tarball)
				return
			}
		}
		npmError(w, http.StatusNotFound, "Not found")
		return
	}
	// The full document also answers Accept:
	// application/vnd.npm.install-v1+json (the abbreviated one is a
	// subset of it, and npm takes either).
	latest := e.versions[0]
	versions := map[string]any{}
	times := map[string]string{"created": e.versions[0].added.Format(npmTime)}
	modified := e.versions[0].added
	for _, v := range e.versions {
		versions[v.pkg.Version] = v.manifest
		times[v.pkg.Version] = v.added.Format(npmTime)
		modified = v.added
		if compareVersions(v.pkg.Version, latest.pkg.Version) > 0 {
			latest = v
		}
	}
	times["modified"] = modified.Format(npmTime)
	doc, err := json.Marshal(map[string]any{
		"_id":       name,
		"name":      name,
		"dist-tags": map[string]string{"latest": latest.pkg.Version},
		"versions":  versions,
		"time":      times,
		"modified":  times["modified"],
	})
	if err != nil {
		npmError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

// npmError answers the JSON error body the npm registry sends.
func npmError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}
