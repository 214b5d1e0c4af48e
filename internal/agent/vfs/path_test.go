package vfs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
)

// TestPathSafety: every kind of hostile path is refused before any I/O,
// with its exact message, by Read, LsInfo, GrepRaw, GlobInfo, Write and Edit.
func TestPathSafety(t *testing.T) {
	st := newLocal(t)
	seed(t, st)
	fsys := newSession(t, st, "s1", vfs.Options{})
	if err := fsys.SetSkills([]vfs.SkillMount{skill(t, st, "compraventa", "escrituras", "compraventa")}); err != nil {
		t.Fatal(err)
	}
	long := "/workspace/" + strings.Repeat("a", vfs.MaxPathLen)
	deep := "/workspace" + strings.Repeat("/d", vfs.MaxPathSegments)
	wideSeg := "/workspace/" + strings.Repeat("s", vfs.MaxSegmentLen+1)
	tests := []struct {
		kind, path, want string
	}{
		{"dotdot relative", "../etc/passwd", "Error: Path traversal not allowed: ../etc/passwd"},
		{"dotdot out of mount", "/workspace/../../etc/passwd", "Error: Path traversal not allowed: /workspace/../../etc/passwd"},
		{"dotdot between mounts", "/skills/../workspace/x", "Error: Path traversal not allowed: /skills/../workspace/x"},
		{"trailing dotdot", "/workspace/a/..", "Error: Path traversal not allowed: /workspace/a/.."},
		{"dot then dotdot", "/workspace/./../x", "Error: Path traversal not allowed: /workspace/./../x"},
		{"home tilde", "~/.ssh/id_rsa", "Error: Path traversal not allowed: ~/.ssh/id_rsa"},
		{"backslash dotdot", `..\..\windows\win.ini`, `Error: Path traversal not allowed: ..\..\windows\win.ini`},
		{"mixed separators dotdot", `/workspace/a\..\..\x`, `Error: Path traversal not allowed: /workspace/a\..\..\x`},
		{"encoded dots", "/workspace/%2e%2e/secret", "Error: Path traversal not allowed: /workspace/%2e%2e/secret"},
		{"encoded dots upper and slash", "/workspace/%2E%2E%2Fetc", "Error: Path traversal not allowed: /workspace/%2E%2E%2Fetc"},
		{"encoded slash", "/workspace/..%2fetc/passwd", "Error: Path traversal not allowed: /workspace/..%2fetc/passwd"},
		{"encoded backslash", "/workspace/..%5c..%5cx", "Error: Path traversal not allowed: /workspace/..%5c..%5cx"},
		{"double encoding", "/workspace/%252e%252e/x", "Error: Path traversal not allowed: /workspace/%252e%252e/x"},
		{"overlong utf-8 dot", "/workspace/%c0%ae%c0%ae/x", "Error: Path traversal not allowed: /workspace/%c0%ae%c0%ae/x"},
		{"iis unicode escape", "/workspace/%u002e%u002e/x", "Error: Path traversal not allowed: /workspace/%u002e%u002e/x"},
		{"encoded nul", "/workspace/a%00.txt", "Error: Path traversal not allowed: /workspace/a%00.txt"},
		{"raw nul", "/workspace/a\x00.txt", `Error: Path contains a control character: "/workspace/a\x00.txt"`},
		{"newline", "/workspace/a\nb", `Error: Path contains a control character: "/workspace/a\nb"`},
		{"c1 control", "/workspace/a\u0085b", `Error: Path contains a control character: "/workspace/a\u0085b"`},
		{"invalid utf-8", "/workspace/\xff\xfe", `Error: Path is not valid UTF-8: "/workspace/\xff\xfe"`},
		{"windows drive backslash", `C:\Windows\system32`, `Error: Windows absolute paths are not supported: C:\Windows\system32. Please use virtual paths starting with / (e.g., /workspace/file.txt)`},
		{"windows drive slash", "c:/users/x", "Error: Windows absolute paths are not supported: c:/users/x. Please use virtual paths starting with / (e.g., /workspace/file.txt)"},
		{"unc path", `\\server\share\x`, `Error: Backslashes are not allowed in paths: \\server\share\x`},
		{"backslash separator", `/workspace\secret`, `Error: Backslashes are not allowed in paths: /workspace\secret`},
		{"host absolute path", "/etc/passwd", "Error: Path must start with one of ['/skills/', '/ticket/', '/workspace/']: /etc/passwd"},
		{"proc", "/proc/self/environ", "Error: Path must start with one of ['/skills/', '/ticket/', '/workspace/']: /proc/self/environ"},
		{"file url", "file:///etc/passwd", "Error: Path must start with one of ['/skills/', '/ticket/', '/workspace/']: /file:/etc/passwd"},
		{"mount name prefix", "/workspacex/a", "Error: Path must start with one of ['/skills/', '/ticket/', '/workspace/']: /workspacex/a"},
		{"too long", long, "Error: Path is too long (4107 bytes, limit 4096)"},
		{"too many segments", deep + "/f", "Error: Path has too many segments (more than 64): " + deep + "/f"},
		{"segment too long", wideSeg, "Error: Path segment is too long (256 bytes, limit 255): " + wideSeg},
		{"empty", "", "Error: Path must not be empty"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			_, err := vfs.CleanPath(tc.path)
			if tc.path != "" && !strings.HasPrefix(tc.want, "Error: Path must start") {
				if errText(err) != tc.want || !errors.Is(err, vfs.ErrInvalidPath) {
					t.Errorf("CleanPath = %v\nwant %s", err, tc.want)
				}
			}
			if _, err := fsys.Read(ctx, tc.path, 0, 0); errText(err) != tc.want || !errors.Is(err, vfs.ErrInvalidPath) {
				t.Errorf("Read = %v\nwant %s", err, tc.want)
			}
			if err := fsys.Write(ctx, tc.path, "x"); errText(err) != tc.want {
				t.Errorf("Write = %v\nwant %s", err, tc.want)
			}
			if _, err := fsys.Edit(ctx, tc.path, "a", "b", false); errText(err) != tc.want {
				t.Errorf("Edit = %v\nwant %s", err, tc.want)
			}
			if tc.path == "" {
				return // "" means "/" for ls, grep and glob
			}
			if _, err := fsys.LsInfo(ctx, tc.path); errText(err) != tc.want {
				t.Errorf("LsInfo = %v\nwant %s", err, tc.want)
			}
			if _, err := fsys.GrepRaw(ctx, "x", tc.path, ""); errText(err) != tc.want {
				t.Errorf("GrepRaw = %v\nwant %s", err, tc.want)
			}
			if _, err := fsys.GlobInfo(ctx, "*", tc.path); errText(err) != tc.want {
				t.Errorf("GlobInfo = %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestCleanPathAccepts(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", "/"},
		{"//", "/"},
		{"/./", "/"},
		{"workspace/a.md", "/workspace/a.md"},
		{"/workspace//a/./b/", "/workspace/a/b"},
		{"/workspace/foo..bar.txt", "/workspace/foo..bar.txt"},
		{"/workspace/...", "/workspace/..."},
		{"/workspace/.hidden", "/workspace/.hidden"},
		{"/workspace/100%", "/workspace/100%"},
		{"/workspace/50%off", "/workspace/50%off"},
		{"/workspace/a%20b", "/workspace/a%20b"},
		{"/workspace/cláusulas ñ.md", "/workspace/cláusulas ñ.md"},
		{"/workspace/a~b", "/workspace/a~b"},
		{"/workspace/C:", "/workspace/C:"},
	}
	for _, tc := range tests {
		got, err := vfs.CleanPath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		again, err := vfs.CleanPath(got)
		if err != nil || again != got {
			t.Errorf("CleanPath is not idempotent on %q: %q, %v", got, again, err)
		}
	}
}

// TestSymlinkEscape: a local store refuses links that leave its root; the
// filesystem reports them as traversal and never returns the target.
func TestSymlinkEscape(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	skillDir := filepath.Join(root, "acme", "skills", "escrituras", "compraventa")
	if err := os.MkdirAll(skillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("SECRET-TOKEN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"SKILL.md":   "../../../../../secret.txt",
		"abs.md":     filepath.Join(base, "secret.txt"),
		"etc":        "/etc",
		"inside.md":  "SKILL2.md",
		"SKILL2.md":  "",
		"escape-dir": "../../../../..",
	} {
		p := filepath.Join(skillDir, name)
		var err error
		if target == "" {
			err = os.WriteFile(p, []byte("inside\n"), 0o644)
		} else {
			err = os.Symlink(target, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := local.Open(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fsys := newSession(t, st, "s1", vfs.Options{})
	if err := fsys.SetSkills([]vfs.SkillMount{skill(t, st, "compraventa", "escrituras", "compraventa")}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range []string{"/skills/compraventa/SKILL.md", "/skills/compraventa/abs.md", "/skills/compraventa/etc/passwd", "/skills/compraventa/escape-dir/secret.txt"} {
		_, err := fsys.Read(ctx, p, 0, 0)
		want := "Error: Path traversal not allowed: " + p + " (a symbolic link leaves the mount)"
		if errText(err) != want || !errors.Is(err, vfs.ErrInvalidPath) {
			t.Errorf("Read(%s) = %v\nwant %s", p, err, want)
		}
	}
	if got, err := fsys.Read(ctx, "/skills/compraventa/inside.md", 0, 0); err != nil || got != "     1\tinside" {
		t.Errorf("Read(in-root link) = %q, %v", got, err)
	}
	res, err := fsys.GrepRaw(ctx, "SECRET", "/", "")
	if err != nil || len(res.Matches) != 0 {
		t.Errorf("grep SECRET = %+v, %v; the target must stay unreachable", res, err)
	}
	if got := lsPaths(t, fsys, "/skills/compraventa"); strings.Contains(strings.Join(got, " "), "abs.md") || strings.Contains(strings.Join(got, " "), "/etc") {
		t.Errorf("ls lists escaping links: %q", got)
	}
}
