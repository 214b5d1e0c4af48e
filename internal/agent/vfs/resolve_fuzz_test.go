package vfs

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// nopStore satisfies blob.Store for resolution tests, which do no I/O.
type nopStore struct{}

func (nopStore) Stat(context.Context, string) (blob.Info, error) {
	return blob.Info{}, blob.ErrNotFound
}
func (nopStore) Get(context.Context, string) (io.ReadCloser, blob.Info, error) {
	return nil, blob.Info{}, blob.ErrNotFound
}
func (nopStore) List(context.Context, string, int) ([]blob.Info, error) { return nil, nil }
func (nopStore) Put(context.Context, string, io.Reader, int64) error    { return nil }
func (nopStore) Delete(context.Context, string) error                   { return nil }

// FuzzResolve checks the invariant of path resolution: whatever the input,
// a resolved path never escapes its mount. The seed corpus is in
// testdata/fuzz/FuzzResolve; run with `go test -fuzz FuzzResolve ./internal/agent/vfs`.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"/", "", "/workspace", "/workspace/a.md", "/skills/compraventa/SKILL.md",
		"/skills/compraventa2/x", "/skills/venta/x", "/skills/../workspace", "../etc/passwd",
		"/workspace/%2e%2e/x", "/workspace/..%2f..%2fetc", `C:\x`, `\\srv\s`, "~/x", "/etc/passwd",
		"/workspace/a\x00b", "/workspace//./b/", "/workspace/shared/x", "/data", "/data/tickets/t.md",
		"/skills", "/skills/", "/skills/compraventa", "/workspace/\u2028", "/workspace/%u002e",
	} {
		f.Add(s)
	}
	st := nopStore{}
	fsys, err := New(Options{
		Mounts: []Mount{
			{Path: "/workspace", Store: st, Prefix: "acme/sessions/s1/workspace/"},
			{Path: "/workspace/shared", Store: st, Prefix: "acme/shared/", ReadOnly: true},
			{Path: "/ticket", Store: st, Prefix: "acme/tickets/T-1/", ReadOnly: true},
			{Path: "/data/tickets", Store: st, Prefix: ""},
		},
		Skills: []SkillMount{
			{Name: "compraventa", Store: st, Prefix: "acme/skills/escrituras/compraventa/"},
			{Name: "contratos-compraventa", Store: st, Prefix: "acme/skills/contratos/compraventa/"},
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	t := fsys.tbl.Load()
	f.Fuzz(func(tt *testing.T, p string) {
		loc, err := fsys.resolve(t, p)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalidPath) {
				tt.Fatalf("resolve(%q) error %v is not an invalid-path *Error", p, err)
			}
			return
		}
		clean := loc.path
		if again, err := CleanPath(clean); err != nil || again != clean {
			tt.Fatalf("resolve(%q) = %q, not canonical (%q, %v)", p, clean, again, err)
		}
		if !strings.HasPrefix(clean, "/") || strings.Contains(clean, "\\") || strings.ContainsRune(clean, 0) {
			tt.Fatalf("resolve(%q) = %q", p, clean)
		}
		for _, seg := range strings.Split(clean, "/")[1:] {
			if seg == ".." || seg == "." || (seg == "" && clean != "/") {
				tt.Fatalf("resolve(%q) = %q has segment %q", p, clean, seg)
			}
		}
		switch {
		case loc.m != nil:
			m := loc.m
			if clean != m.path && !strings.HasPrefix(clean, m.path+"/") {
				tt.Fatalf("resolve(%q) = %q routed to mount %q", p, clean, m.path)
			}
			for _, other := range t.mounts {
				if len(other.path) > len(m.path) && (clean == other.path || strings.HasPrefix(clean, other.path+"/")) {
					tt.Fatalf("resolve(%q) = %q chose %q over the longer %q", p, clean, m.path, other.path)
				}
			}
			if m.skill {
				segs := strings.Split(clean, "/")
				if len(segs) < 3 || segs[1] != "skills" || "/skills/"+segs[2] != m.path {
					tt.Fatalf("resolve(%q) = %q matched skill %q by other than its exact name", p, clean, m.path)
				}
			}
			if loc.rel == "" {
				if clean != m.path {
					tt.Fatalf("resolve(%q) = %q: empty rel below the mount root", p, clean)
				}
				return
			}
			if loc.rel != clean[len(m.path)+1:] {
				tt.Fatalf("resolve(%q): rel %q does not match path %q", p, loc.rel, clean)
			}
			key := loc.key()
			if !strings.HasPrefix(key, m.prefix) {
				tt.Fatalf("resolve(%q): key %q escapes prefix %q", p, key, m.prefix)
			}
			if err := blob.ValidateKey(key); err != nil {
				tt.Fatalf("resolve(%q): key %q invalid: %v", p, key, err)
			}
			for _, seg := range strings.Split(key, "/") {
				if seg == ".." || seg == "." {
					tt.Fatalf("resolve(%q): key %q has %q", p, key, seg)
				}
			}
		case loc.hidden:
			if clean != "/skills" && !strings.HasPrefix(clean, "/skills/") {
				tt.Fatalf("resolve(%q) = %q hidden outside /skills", p, clean)
			}
			for _, m := range t.mounts {
				if m.skill && (clean == m.path || strings.HasPrefix(clean, m.path+"/")) {
					tt.Fatalf("resolve(%q) = %q hidden though skill %q is loaded", p, clean, m.path)
				}
			}
		default:
			above := clean == "/"
			for _, m := range t.mounts {
				above = above || strings.HasPrefix(m.path, clean+"/")
			}
			if !above {
				tt.Fatalf("resolve(%q) = %q: neither a mount, a hidden path nor a directory above a mount", p, clean)
			}
		}
	})
}
