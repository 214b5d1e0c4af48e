package testregistry

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// PyPI is a package index served on loopback with PEP 503's simple API:
// the wheels added with [PyPI.Add]. Point pip at it with --index-url
// [PyPI.URL].
type PyPI struct {
	server
	tb testing.TB

	mu       sync.Mutex
	projects map[string][]*pypiFile // by normalized project name, in the order added
}

// Wheel is one version of a pure-Python project that [PyPI.Add] publishes
// and [BuildWheel] builds.
type Wheel struct {
	// Name is the project's name ("echo-mcp").
	Name string
	// Version is the project's version.
	Version string
	// Files are the wheel's module files by path ("echo_mcp/__init__.py",
	// "echo_mcp/server.py"); the dist-info directory is written for them.
	Files map[string]string
	// ConsoleScripts is entry_points.txt's [console_scripts]: command
	// name → "module:function".
	ConsoleScripts map[string]string
	// Requires are METADATA's Requires-Dist lines ("anyio>=4").
	Requires []string
	// Tamper makes the index serve a wheel (valid, but with one more
	// module file) whose bytes do not match the #sha256= fragment of its
	// link, which is the digest of the untampered wheel. [BuildWheel]
	// ignores it.
	Tamper bool
}

// pypiFile is one wheel as served.
type pypiFile struct {
	file   string // the wheel's file name
	data   []byte // the bytes served
	sha256 string // hex digest announced in the link
}

// zipTime is the modification time of every wheel entry.
var zipTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// NewPyPI starts an empty index on 127.0.0.1, closed at tb's cleanup.
func NewPyPI(tb testing.TB) *PyPI {
	tb.Helper()
	r := &PyPI{tb: tb, projects: map[string][]*pypiFile{}}
	r.start(tb, http.HandlerFunc(r.serve))
	return r
}

// URL returns the simple index's URL ("http://127.0.0.1:PORT/simple/"), as
// pip's --index-url takes it.
func (r *PyPI) URL() string { return r.srv.URL + "/simple/" }

// Requests returns the paths requested so far, decoded, in order.
func (r *PyPI) Requests() []string { return r.logged() }

// Add publishes w. Call it several times with one name to publish several
// versions. It fails the test when the wheel cannot be built or that
// version is already published.
func (r *PyPI) Add(w Wheel) {
	r.tb.Helper()
	file, announced, err := BuildWheel(w)
	if err != nil {
		r.tb.Fatalf("testregistry: wheel %s %s: %v", w.Name, w.Version, err)
	}
	served := announced
	if w.Tamper {
		t := w
		t.Files = map[string]string{"tampered.py": "# These bytes were not published.\n"}
		for name, content := range w.Files {
			t.Files[name] = content
		}
		if _, served, err = BuildWheel(t); err != nil {
			r.tb.Fatalf("testregistry: wheel %s %s: %v", w.Name, w.Version, err)
		}
	}
	sum := sha256.Sum256(announced)
	project := normalizeProject(w.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.projects[project] {
		if f.file == file {
			r.tb.Fatalf("testregistry: wheel %s added twice", file)
		}
	}
	r.projects[project] = append(r.projects[project], &pypiFile{
		file: file, data: served, sha256: hex.EncodeToString(sum[:]),
	})
}

// WriteDir writes the wheels added so far, as served, into dir as plain
// files, for pip --find-links dir.
func (r *PyPI) WriteDir(dir string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, files := range r.projects {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f.file), f.data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// projectRuns are the runs of characters PEP 503 folds into one "-".
var projectRuns = regexp.MustCompile(`[-_.]+`)

// normalizeProject is PEP 503's normalized name: lowercase, each run of
// "-", "_" and "." replaced by "-".
func normalizeProject(name string) string {
	return projectRuns.ReplaceAllString(strings.ToLower(name), "-")
}

// wheelName is a project's name as a wheel's file name writes it:
// lowercase, each run of "-", "_" and "." replaced by "_".
func wheelName(name string) string {
	return projectRuns.ReplaceAllString(strings.ToLower(name), "_")
}

// BuildWheel builds w as a py3-none-any wheel: its Files, and a dist-info
// directory holding METADATA (Metadata-Version 2.1), WHEEL (Wheel-Version
// 1.0, Root-Is-Purelib true, Tag py3-none-any), entry_points.txt and
// RECORD (sha256 digests, urlsafe base64 without padding, and sizes). It
// returns the wheel's file name ("echo_mcp-1.0.0-py3-none-any.whl") and
// bytes, the same for the same w.
func BuildWheel(w Wheel) (filename string, data []byte, err error) {
	if w.Name == "" || w.Version == "" {
		return "", nil, fmt.Errorf("a wheel needs a name and a version")
	}
	dist := wheelName(w.Name) + "-" + strings.ReplaceAll(w.Version, "-", "_")
	info := dist + ".dist-info/"
	filename = dist + "-py3-none-any.whl"

	var metadata strings.Builder
	fmt.Fprintf(&metadata, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n", w.Name, w.Version)
	for _, req := range w.Requires {
		fmt.Fprintf(&metadata, "Requires-Dist: %s\n", req)
	}
	var entryPoints strings.Builder
	if len(w.ConsoleScripts) > 0 {
		entryPoints.WriteString("[console_scripts]\n")
		for _, name := range sortedKeys(w.ConsoleScripts) {
			fmt.Fprintf(&entryPoints, "%s = %s\n", name, w.ConsoleScripts[name])
		}
	}

	type entry struct{ name, content string }
	var entries []entry
	for _, name := range sortedKeys(w.Files) {
		clean := path.Clean(name)
		if clean == "." || strings.HasPrefix(clean, "../") || path.IsAbs(clean) || strings.HasPrefix(clean, info) {
			return "", nil, fmt.Errorf("bad file name %q", name)
		}
		entries = append(entries, entry{clean, w.Files[name]})
	}
	entries = append(entries,
		entry{info + "METADATA", metadata.String()},
		entry{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: skillgate-testregistry\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		entry{info + "entry_points.txt", entryPoints.String()},
	)
	var record strings.Builder
	for _, e := range entries {
		sum := sha256.Sum256([]byte(e.content))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", e.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(e.content))
	}
	fmt.Fprintf(&record, "%sRECORD,,\n", info)
	entries = append(entries, entry{info + "RECORD", record.String()})

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: zipTime}
		hdr.SetMode(0o644)
		f, err := zw.CreateHeader(hdr)
		if err != nil {
			return "", nil, err
		}
		if _, err := f.Write([]byte(e.content)); err != nil {
			return "", nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return "", nil, err
	}
	return filename, buf.Bytes(), nil
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// serve answers /simple/ (the projects), /simple/<project>/ (its wheels'
// links) and /files/<file> (a wheel).
func (r *PyPI) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := req.URL.Path
	switch {
	case p == "/simple":
		http.Redirect(w, req, "/simple/", http.StatusMovedPermanently)
	case p == "/simple/":
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>Simple index</title></head>\n<body>\n")
		projects := make([]string, 0, len(r.projects))
		for project := range r.projects {
			projects = append(projects, project)
		}
		slices.Sort(projects)
		for _, project := range projects {
			fmt.Fprintf(&b, "<a href=\"%s/\">%s</a><br>\n", project, html.EscapeString(project))
		}
		b.WriteString("</body>\n</html>\n")
		writeHTML(w, b.String())
	case strings.HasPrefix(p, "/simple/"):
		name := strings.TrimPrefix(p, "/simple/")
		name = strings.TrimSuffix(name, "/")
		if name == "" || strings.Contains(name, "/") {
			http.NotFound(w, req)
			return
		}
		project := normalizeProject(name)
		files := r.projects[project]
		if files == nil {
			http.NotFound(w, req)
			return
		}
		if name != project || !strings.HasSuffix(p, "/") {
			http.Redirect(w, req, "/simple/"+project+"/", http.StatusMovedPermanently)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>Links for %s</title></head>\n<body>\n<h1>Links for %s</h1>\n", html.EscapeString(project), html.EscapeString(project))
		for _, f := range files {
			fmt.Fprintf(&b, "<a href=\"../../files/%s#sha256=%s\">%s</a><br>\n", f.file, f.sha256, html.EscapeString(f.file))
		}
		b.WriteString("</body>\n</html>\n")
		writeHTML(w, b.String())
	case strings.HasPrefix(p, "/files/"):
		file := strings.TrimPrefix(p, "/files/")
		for _, files := range r.projects {
			for _, f := range files {
				if f.file == file {
					w.Header().Set("Content-Type", "application/octet-stream")
					w.Write(f.data)
					return
				}
			}
		}
		http.NotFound(w, req)
	default:
		http.NotFound(w, req)
	}
}

// writeHTML answers an HTML page of the simple API.
func writeHTML(w http.ResponseWriter, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(page))
}
