package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

func TestReadFormat(t *testing.T) {
	long := strings.Repeat("x", vfs.MaxLineLength)
	multi := strings.Repeat("é", 2*vfs.MaxLineLength+3) // 2-byte characters: chunks count characters
	tests := []struct {
		name          string
		content       string
		offset, limit int
		want, wantErr string
	}{
		{"simple", "a\nb\nc\n", 0, 0, "     1\ta\n     2\tb\n     3\tc", ""},
		{"no trailing newline", "a\nb", 0, 0, "     1\ta\n     2\tb", ""},
		{"blank lines kept", "a\n\n\nb\n\n", 0, 0, "     1\ta\n     2\t\n     3\t\n     4\tb\n     5\t", ""},
		{"crlf", "a\r\nb\r\n", 0, 0, "     1\ta\n     2\tb", ""},
		{"lone cr", "a\rb", 0, 0, "     1\ta\n     2\tb", ""},
		{"offset", "a\nb\nc\nd\n", 1, 2, "     2\tb\n     3\tc", ""},
		{"limit past end", "a\nb\n", 1, 10, "     2\tb", ""},
		{"negative offset is zero", "a\n", -5, 0, "     1\ta", ""},
		{"tabs kept", "\tx\t\n", 0, 0, "     1\t\tx\t", ""},
		{"wide numbers", strings.Repeat("l\n", 1000000), 999998, 0, "999999\tl\n1000000\tl", ""},
		{"exactly max length", long + "\n", 0, 0, "     1\t" + long, ""},
		{"continuation rows", long + "yz\nnext\n", 0, 0, "     1\t" + long + "\n   1.1\tyz\n     2\tnext", ""},
		{"continuation by characters", multi, 0, 0, "     1\t" + multi[:2*vfs.MaxLineLength] + "\n   1.1\t" + multi[2*vfs.MaxLineLength:4*vfs.MaxLineLength] + "\n   1.2\téé" + "é", ""},
		{"empty", "", 0, 0, vfs.EmptyContentWarning, ""},
		{"whitespace only", " \n\t\n", 5, 0, vfs.EmptyContentWarning, ""},
		{"offset at end", "a\nb\n", 2, 0, "", "Error: Line offset 2 exceeds file length (2 lines)"},
		{"offset far past end", "a\nb\nc", 100, 0, "", "Error: Line offset 100 exceeds file length (3 lines)"},
	}
	forEachStore(t, func(t *testing.T, st blob.Store) {
		fsys := newSession(t, st, "s1", vfs.Options{})
		ctx := context.Background()
		for i, tc := range tests {
			p := fmt.Sprintf("/workspace/f%d.txt", i)
			if err := fsys.Write(ctx, p, tc.content); err != nil {
				t.Fatalf("%s: Write: %v", tc.name, err)
			}
			got, err := fsys.Read(ctx, p, tc.offset, tc.limit)
			if got != tc.want || errText(err) != tc.wantErr {
				t.Errorf("%s: Read = %.200q, %v\nwant %.200q, %q", tc.name, got, err, tc.want, tc.wantErr)
			}
			if tc.wantErr != "" && !errors.Is(err, vfs.ErrOffset) {
				t.Errorf("%s: error kind %v, want ErrOffset", tc.name, err)
			}
			direct, derr := vfs.FormatContent([]byte(tc.content), tc.offset, tc.limit)
			if direct != got || errText(derr) != errText(err) {
				t.Errorf("%s: FormatContent differs from Read", tc.name)
			}
		}
		// Default limit: 2,000 lines.
		var b strings.Builder
		for i := range 2500 {
			fmt.Fprintf(&b, "line %d\n", i+1)
		}
		if err := fsys.Write(ctx, "/workspace/big.txt", b.String()); err != nil {
			t.Fatal(err)
		}
		got, err := fsys.Read(ctx, "/workspace/big.txt", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(got, "\n")
		if len(lines) != vfs.DefaultReadLimit || lines[len(lines)-1] != "  2000\tline 2000" {
			t.Errorf("default limit: %d rows, last %q", len(lines), lines[len(lines)-1])
		}
	})
}

func TestReadErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, st blob.Store) {
		ctx := context.Background()
		seed(t, st)
		put(t, st, tenant+"/sessions/s1/workspace/invalid-utf8.txt", "caf\xe9\n")
		put(t, st, tenant+"/sessions/s1/workspace/nul.txt", "a\x00b")
		put(t, st, tenant+"/sessions/s1/workspace/image.PNG", "not really a png")
		put(t, st, tenant+"/sessions/s1/workspace/big.txt", strings.Repeat("x", 2000))
		put(t, st, tenant+"/sessions/s1/workspace/gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")
		fsys := newSession(t, st, "s1", vfs.Options{MaxFileSize: 1000})
		tests := []struct {
			path string
			kind error
			want string
		}{
			{"/workspace/missing.md", vfs.ErrNotFound, "Error: File '/workspace/missing.md' not found"},
			{"/workspace", vfs.ErrNotFound, "Error: File '/workspace' not found"},
			{"/", vfs.ErrNotFound, "Error: File '/' not found"},
			{"/skills", vfs.ErrNotFound, "Error: File '/skills' not found"},
			{"workspace//missing.md/", vfs.ErrNotFound, "Error: File '/workspace/missing.md' not found"},
			{"/workspace/invalid-utf8.txt", vfs.ErrBinary, "Error: '/workspace/invalid-utf8.txt' is a binary file (application/octet-stream, 5 bytes) and cannot be read as text. Refer to it by path."},
			{"/workspace/nul.txt", vfs.ErrBinary, "Error: '/workspace/nul.txt' is a binary file (application/octet-stream, 3 bytes) and cannot be read as text. Refer to it by path."},
			{"/workspace/image.PNG", vfs.ErrBinary, "Error: '/workspace/image.PNG' is a binary file (image/png, 16 bytes) and cannot be read as text. Refer to it by path."},
			{"/workspace/gz", vfs.ErrBinary, "Error: '/workspace/gz' is a binary file (application/x-gzip, 10 bytes) and cannot be read as text. Refer to it by path."},
			{"/workspace/big.txt", vfs.ErrTooLarge, "Error: the lines of '/workspace/big.txt' asked for (offset 0, limit 2000) are more than 1000 bytes, the limit of one read (the file is 2000 bytes); read fewer lines with offset and limit, or search it with grep"},
		}
		for _, tc := range tests {
			_, err := fsys.Read(ctx, tc.path, 0, 0)
			if errText(err) != tc.want || !errors.Is(err, tc.kind) {
				t.Errorf("Read(%s) = %v\nwant %s", tc.path, err, tc.want)
			}
		}
	})
}

func TestWriteEdit(t *testing.T) {
	forEachStore(t, func(t *testing.T, st blob.Store) {
		ctx := context.Background()
		seed(t, st)
		fsys := newSession(t, st, "s1", vfs.Options{MaxFileSize: 64})
		if err := fsys.SetSkills([]vfs.SkillMount{skill(t, st, "compraventa", "escrituras", "compraventa")}); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Write(ctx, "/workspace/notes/a.md", "uno dos uno\n"); err != nil {
			t.Fatal(err)
		}
		if got := vfs.FormatWrite("/workspace/notes/a.md"); got != "Updated file /workspace/notes/a.md" {
			t.Errorf("FormatWrite = %q", got)
		}
		writes := []struct {
			path, content string
			kind          error
			want          string
		}{
			{"/workspace/notes/a.md", "x", vfs.ErrExists, "Cannot write to /workspace/notes/a.md because it already exists. Read and then make an edit, or write to a new path."},
			{"/workspace/notes", "x", vfs.ErrExists, "Cannot write to /workspace/notes because it already exists. Read and then make an edit, or write to a new path."},
			{"/workspace", "x", vfs.ErrExists, "Cannot write to /workspace because it already exists. Read and then make an edit, or write to a new path."},
			{"/workspace/notes/a.md/b.md", "x", vfs.ErrExists, "Error writing file '/workspace/notes/a.md/b.md': '/workspace/notes/a.md' is a file, not a directory"},
			{"/workspace/huge.md", strings.Repeat("x", 65), vfs.ErrTooLarge, "Error writing file '/workspace/huge.md': content is 65 bytes, limit 64 bytes"},
			{"/skills/compraventa/SKILL.md", "x", vfs.ErrReadOnly, "Error: Cannot modify '/skills/compraventa/SKILL.md': '/skills' is mounted read-only"},
			{"/skills/compraventa/new.md", "x", vfs.ErrReadOnly, "Error: Cannot modify '/skills/compraventa/new.md': '/skills' is mounted read-only"},
			{"/skills/hipoteca/new.md", "x", vfs.ErrReadOnly, "Error: Cannot modify '/skills/hipoteca/new.md': '/skills' is mounted read-only"},
			{"/skills", "x", vfs.ErrReadOnly, "Error: Cannot modify '/skills': '/skills' is mounted read-only"},
			{"/ticket/ticket.md", "x", vfs.ErrReadOnly, "Error: Cannot modify '/ticket/ticket.md': '/ticket' is mounted read-only"},
			{"/ticket/new.md", "x", vfs.ErrReadOnly, "Error: Cannot modify '/ticket/new.md': '/ticket' is mounted read-only"},
			{"/", "x", vfs.ErrExists, "Cannot write to / because it already exists. Read and then make an edit, or write to a new path."},
		}
		for _, tc := range writes {
			err := fsys.Write(ctx, tc.path, tc.content)
			if errText(err) != tc.want || !errors.Is(err, tc.kind) {
				t.Errorf("Write(%s) = %v\nwant %s", tc.path, err, tc.want)
			}
		}
		edits := []struct {
			path, old, new string
			all            bool
			n              int
			kind           error
			want           string
		}{
			{"/workspace/notes/a.md", "uno", "1", false, 0, vfs.ErrAmbiguous, "Error: String 'uno' appears 2 times in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context."},
			{"/workspace/notes/a.md", "tres", "3", false, 0, vfs.ErrNoMatch, "Error: String not found in file: 'tres'"},
			{"/workspace/notes/missing.md", "a", "b", false, 0, vfs.ErrNotFound, "Error: File '/workspace/notes/missing.md' not found"},
			{"/workspace/notes/a.md", "", "b", false, 0, vfs.ErrInvalidArgument, "Error: old_string must not be empty"},
			{"/skills/compraventa/SKILL.md", "a", "b", false, 0, vfs.ErrReadOnly, "Error: Cannot modify '/skills/compraventa/SKILL.md': '/skills' is mounted read-only"},
			{"/skills/nope/SKILL.md", "a", "b", false, 0, vfs.ErrReadOnly, "Error: Cannot modify '/skills/nope/SKILL.md': '/skills' is mounted read-only"},
			{"/ticket/ticket.md", "a", "b", false, 0, vfs.ErrReadOnly, "Error: Cannot modify '/ticket/ticket.md': '/ticket' is mounted read-only"},
			{"/workspace/notes/a.md", "dos", "two", false, 1, nil, ""},
			{"/workspace/notes/a.md", "uno", "1", true, 2, nil, ""},
			{"/workspace/notes/a.md", "1", strings.Repeat("y", 70), true, 0, vfs.ErrTooLarge, "Error editing file '/workspace/notes/a.md': the result is 146 bytes, limit 64 bytes"},
		}
		for _, tc := range edits {
			n, err := fsys.Edit(ctx, tc.path, tc.old, tc.new, tc.all)
			if n != tc.n || errText(err) != tc.want || (tc.kind != nil && !errors.Is(err, tc.kind)) {
				t.Errorf("Edit(%s, %q) = %d, %v\nwant %d, %s", tc.path, tc.old, n, err, tc.n, tc.want)
			}
		}
		if got, err := fsys.Read(ctx, "/workspace/notes/a.md", 0, 0); err != nil || got != "     1\t1 two 1" {
			t.Errorf("after edits Read = %q, %v", got, err)
		}
		if got := vfs.FormatEdit("/workspace/notes/a.md", 2); got != "Successfully replaced 2 instance(s) of the string in '/workspace/notes/a.md'" {
			t.Errorf("FormatEdit = %q", got)
		}
		// The skill and the ticket are unchanged.
		if got, _ := fsys.Read(ctx, "/ticket/ticket.md", 0, 0); got != "     1\tTicket T-1: compraventa de un piso en Madrid." {
			t.Errorf("ticket changed: %q", got)
		}
	})
}

func TestGrepGlob(t *testing.T) {
	forEachStore(t, func(t *testing.T, st blob.Store) {
		ctx := context.Background()
		seed(t, st)
		fsys := newSession(t, st, "s1", vfs.Options{MaxGrepMatches: 5})
		if err := fsys.SetSkills([]vfs.SkillMount{skill(t, st, "compraventa", "escrituras", "compraventa")}); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"/workspace/a.md":        "alpha\nbeta needle\ngamma\nneedle needle\n",
			"/workspace/b.txt":       "no match\r\nneedle in crlf\r\n",
			"/workspace/sub/c.md":    "needle\n",
			"/workspace/sub/d.py":    "x = 'needle'\n",
			"/workspace/.hidden.md":  "needle\n",
			"/workspace/bin.dat":     "needle\x00\x01",
			"/workspace/many.log":    strings.Repeat("needle\n", 10),
			"/workspace/regex.md":    "a.b(c)*\n",
			"/workspace/deep/x/y.md": "needle deep\n",
		}
		for p, c := range files {
			if err := fsys.Write(ctx, p, c); err != nil {
				t.Fatal(err)
			}
		}
		grep := func(pattern, path, glob string) vfs.GrepResult {
			t.Helper()
			res, err := fsys.GrepRaw(ctx, pattern, path, glob)
			if err != nil {
				t.Fatalf("GrepRaw(%q, %q, %q): %v", pattern, path, glob, err)
			}
			return res
		}
		// Literal, not regex; line numbers 1-based; CRLF stripped; wildcards
		// skip dotfiles unless the glob starts with a dot.
		res := grep("needle", "/workspace", "*.{md,txt}")
		want := []vfs.GrepMatch{
			{Path: "/workspace/a.md", Line: 2, Text: "beta needle"},
			{Path: "/workspace/a.md", Line: 4, Text: "needle needle"},
			{Path: "/workspace/b.txt", Line: 2, Text: "needle in crlf"},
			{Path: "/workspace/deep/x/y.md", Line: 1, Text: "needle deep"},
			{Path: "/workspace/sub/c.md", Line: 1, Text: "needle"},
		}
		if !slices.Equal(res.Matches, want) || res.Truncated {
			t.Errorf("grep needle *.{md,txt} = %+v (truncated %v)\nwant %+v", res.Matches, res.Truncated, want)
		}
		if got := vfs.FormatGrep(res, vfs.GrepContent); got != "/workspace/a.md:\n  2: beta needle\n  4: needle needle\n/workspace/b.txt:\n  2: needle in crlf\n/workspace/deep/x/y.md:\n  1: needle deep\n/workspace/sub/c.md:\n  1: needle" {
			t.Errorf("FormatGrep content =\n%s", got)
		}
		if got := grep("needle", "/workspace", ".*"); !slices.Equal(got.Matches, []vfs.GrepMatch{{Path: "/workspace/.hidden.md", Line: 1, Text: "needle"}}) {
			t.Errorf("grep dotfile glob = %+v", got)
		}
		res = grep("needle", "/workspace", "")
		if len(res.Matches) != 5 || !res.Truncated || res.Matches[0].Path != "/workspace/.hidden.md" || res.Matches[4].Path != "/workspace/deep/x/y.md" {
			t.Errorf("grep over the bound = %+v, truncated %v", res.Matches, res.Truncated)
		}
		if got := vfs.FormatGrep(res, vfs.GrepFilesWithMatches); got != "/workspace/.hidden.md\n/workspace/a.md\n/workspace/b.txt\n/workspace/deep/x/y.md\n"+vfs.TruncationGuidance {
			t.Errorf("FormatGrep truncated =\n%s", got)
		}
		if got := grep("a.b(c)*", "/", ""); len(got.Matches) != 1 || got.Matches[0].Path != "/workspace/regex.md" {
			t.Errorf("literal grep = %+v", got)
		}
		if got := grep("needle", "/workspace/sub", "*.py"); !slices.Equal(got.Matches, []vfs.GrepMatch{{Path: "/workspace/sub/d.py", Line: 1, Text: "x = 'needle'"}}) {
			t.Errorf("grep in dir with glob = %+v", got)
		}
		if got := grep("needle", "/workspace/sub/c.md", ""); len(got.Matches) != 1 || got.Matches[0].Path != "/workspace/sub/c.md" {
			t.Errorf("grep one file = %+v", got)
		}
		if got := grep("needle", "/workspace/bin.dat", ""); len(got.Matches) != 0 {
			t.Errorf("grep matched a binary file: %+v", got)
		}
		if got := grep("needle", "/workspace/nope", ""); len(got.Matches) != 0 || got.Truncated {
			t.Errorf("grep missing dir = %+v", got)
		}
		if got := grep("needle", "/skills/hipoteca", ""); len(got.Matches) != 0 {
			t.Errorf("grep unloaded skill = %+v", got)
		}
		if got := grep("line1\nline2", "/", ""); len(got.Matches) != 0 {
			t.Errorf("multi-line pattern matched: %+v", got)
		}
		if got := vfs.FormatGrep(grep("zzz", "/", ""), vfs.GrepFilesWithMatches); got != "No matches found" {
			t.Errorf("no matches = %q", got)
		}
		if got := vfs.FormatGrep(grep("needle", "/workspace/sub", ""), vfs.GrepFilesWithMatches); got != "/workspace/sub/c.md\n/workspace/sub/d.py" {
			t.Errorf("files_with_matches = %q", got)
		}
		// Truncation keeps the first matches in path order (many.log has 10).
		res = grep("needle", "/workspace/many.log", "")
		if len(res.Matches) != 5 || !res.Truncated || res.Matches[4].Line != 5 {
			t.Errorf("grep bound = %d matches, truncated %v", len(res.Matches), res.Truncated)
		}
		if _, err := fsys.GrepRaw(ctx, "x", "/", "[bad"); errText(err) != "Error: Invalid glob pattern '[bad': malformed segment '[bad'" {
			t.Errorf("bad grep glob = %v", err)
		}

		globs := []struct {
			pattern, path string
			want          []string
			wantErr       string
		}{
			{"*.md", "/workspace", []string{"/workspace/a.md", "/workspace/regex.md"}, ""},
			{"**/*.md", "/workspace", []string{"/workspace/a.md", "/workspace/deep/x/y.md", "/workspace/regex.md", "/workspace/sub/c.md"}, ""},
			{".*.md", "/workspace", []string{"/workspace/.hidden.md"}, ""},
			{"*.{py,txt}", "/workspace", []string{"/workspace/b.txt"}, ""},
			{"**/*.{py,txt}", "/workspace", []string{"/workspace/b.txt", "/workspace/sub/d.py"}, ""},
			{"sub/?.md", "/workspace", []string{"/workspace/sub/c.md"}, ""},
			{"[a-b].*", "/workspace", []string{"/workspace/a.md", "/workspace/b.txt"}, ""},
			{"[!a].md", "/workspace", nil, ""},
			{"deep/**", "/workspace", []string{"/workspace/deep/x/y.md"}, ""},
			{"/workspace/*.txt", "/", []string{"/workspace/b.txt"}, ""},
			{"skills/*/SKILL.md", "/", []string{"/skills/compraventa/SKILL.md"}, ""},
			{"**/*.pdf", "/", []string{"/skills/compraventa/resources/plantilla.pdf"}, ""},
			{"*", "/skills/hipoteca", nil, ""},
			{"*.md", "/workspace/a.md", []string{"/workspace/a.md"}, ""},
			{"../*", "/workspace", nil, "Error: Path traversal not allowed in glob pattern"},
			{"a/{b,../c}", "/workspace", nil, "Error: Path traversal not allowed in glob pattern"},
			{"[z-", "/workspace", nil, "Error: Invalid glob pattern '[z-': malformed segment '[z-'"},
		}
		for _, g := range globs {
			l, err := fsys.GlobInfo(ctx, g.pattern, g.path)
			var got []string
			for _, e := range l.Entries {
				got = append(got, e.Path)
			}
			if !slices.Equal(got, g.want) || errText(err) != g.wantErr {
				t.Errorf("glob %q in %s = %q, %v; want %q, %q", g.pattern, g.path, got, err, g.want, g.wantErr)
			}
		}
		if got := vfs.FormatGlob(vfs.Listing{}); got != "No files found" {
			t.Errorf("FormatGlob(empty) = %q", got)
		}
	})
}

// TestNestedMounts: the longest prefix wins, a nested mount point appears
// in its parent's listing and shadows the parent store's files there.
func TestNestedMounts(t *testing.T) {
	ctx := context.Background()
	st := newLocal(t)
	shared := newLocal(t)
	put(t, shared, "guide.md", "shared guide\n")
	put(t, st, "acme/sessions/s1/workspace/shared/shadowed.md", "hidden by the mount\n")
	put(t, st, "acme/sessions/s1/workspace/own.md", "own\n")
	fsys := newSession(t, st, "s1", vfs.Options{Mounts: []vfs.Mount{
		{Path: "/workspace/shared", Store: shared, ReadOnly: true},
		{Path: "/data/tickets", Store: shared},
	}})
	if got := lsPaths(t, fsys, "/"); !slices.Equal(got, []string{"/data/", "/ticket/", "/workspace/"}) {
		t.Errorf("ls / = %q", got)
	}
	if got := lsPaths(t, fsys, "/data"); !slices.Equal(got, []string{"/data/tickets/"}) {
		t.Errorf("ls /data = %q", got)
	}
	if got := lsPaths(t, fsys, "/workspace"); !slices.Equal(got, []string{"/workspace/own.md", "/workspace/shared/"}) {
		t.Errorf("ls /workspace = %q", got)
	}
	if got := lsPaths(t, fsys, "/workspace/shared"); !slices.Equal(got, []string{"/workspace/shared/guide.md"}) {
		t.Errorf("ls /workspace/shared = %q", got)
	}
	if _, err := fsys.Read(ctx, "/workspace/shared/shadowed.md", 0, 0); !errors.Is(err, vfs.ErrNotFound) {
		t.Errorf("shadowed file readable: %v", err)
	}
	if err := fsys.Write(ctx, "/workspace/shared/x.md", "x"); errText(err) != "Error: Cannot modify '/workspace/shared/x.md': '/workspace/shared' is mounted read-only" {
		t.Errorf("write into nested read-only mount = %v", err)
	}
	res, err := fsys.GrepRaw(ctx, "", "/workspace", "")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, m := range res.Matches {
		paths = append(paths, m.Path)
	}
	if !slices.Equal(paths, []string{"/workspace/own.md", "/workspace/shared/guide.md"}) {
		t.Errorf("grep over nested mounts = %q", paths)
	}
}

func TestNewValidation(t *testing.T) {
	st := newLocal(t)
	tests := []struct {
		name string
		opts vfs.Options
		want string
	}{
		{"nil store", vfs.Options{Mounts: []vfs.Mount{{Path: "/workspace"}}}, `vfs: mount "/workspace": store is nil`},
		{"relative", vfs.Options{Mounts: []vfs.Mount{{Path: "workspace", Store: st}}}, `vfs: mount "workspace": path must be canonical and absolute (e.g. /workspace)`},
		{"not canonical", vfs.Options{Mounts: []vfs.Mount{{Path: "/workspace/", Store: st}}}, `vfs: mount "/workspace/": path must be canonical and absolute (e.g. /workspace)`},
		{"root", vfs.Options{Mounts: []vfs.Mount{{Path: "/", Store: st}}}, `vfs: mount "/": path is reserved`},
		{"skills", vfs.Options{Mounts: []vfs.Mount{{Path: "/skills", Store: st}}}, `vfs: mount "/skills": path is reserved`},
		{"under skills", vfs.Options{Mounts: []vfs.Mount{{Path: "/skills/x", Store: st}}}, `vfs: mount "/skills/x": path is reserved`},
		{"twice", vfs.Options{Mounts: []vfs.Mount{{Path: "/a", Store: st}, {Path: "/a", Store: st}}}, `vfs: mount "/a": mounted twice`},
		{"bad prefix", vfs.Options{Mounts: []vfs.Mount{{Path: "/a", Store: st, Prefix: "x"}}}, `vfs: mount "/a": prefix: blob: invalid key: prefix "x" must be empty or end with a slash`},
		{"skill name with slash", vfs.Options{Skills: []vfs.SkillMount{{Name: "escrituras/compraventa", Store: st}}}, `vfs: skill "escrituras/compraventa": name must be one path segment`},
		{"skill name dotdot", vfs.Options{Skills: []vfs.SkillMount{{Name: "..", Store: st}}}, `vfs: skill "..": name must be one path segment`},
		{"skill name empty", vfs.Options{Skills: []vfs.SkillMount{{Name: "", Store: st}}}, `vfs: skill "": name must be one path segment`},
		{"skill nil store", vfs.Options{Skills: []vfs.SkillMount{{Name: "a"}}}, `vfs: skill "a": store is nil`},
	}
	for _, tc := range tests {
		if _, err := vfs.New(tc.opts); errText(err) != tc.want {
			t.Errorf("%s: New = %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// failingStore fails every call with an internal-looking error.
type failingStore struct{}

var errInternal = errors.New("dial tcp 10.0.0.7:9000: connection refused (bucket acme-prod)")

func (failingStore) Stat(context.Context, string) (blob.Info, error) { return blob.Info{}, errInternal }
func (failingStore) Get(context.Context, string) (io.ReadCloser, blob.Info, error) {
	return nil, blob.Info{}, errInternal
}
func (failingStore) List(context.Context, string, int) ([]blob.Info, error) { return nil, errInternal }
func (failingStore) Put(context.Context, string, io.Reader, int64) error    { return errInternal }
func (failingStore) Delete(context.Context, string) error                   { return errInternal }

// TestStorageErrorsHideInternals: the agent sees a generic message, the
// cause stays in the chain for the operator.
func TestStorageErrorsHideInternals(t *testing.T) {
	ctx := context.Background()
	fsys, err := vfs.New(vfs.Options{Mounts: []vfs.Mount{{Path: "/workspace", Store: failingStore{}, Prefix: "acme/sessions/s1/workspace/"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fsys.Read(ctx, "/workspace/a.md", 0, 0)
	if errText(err) != "Error reading file '/workspace/a.md': storage error" || !errors.Is(err, vfs.ErrIO) || !errors.Is(err, errInternal) {
		t.Errorf("Read = %v", err)
	}
	if err := fsys.Write(ctx, "/workspace/a.md", "x"); errText(err) != "Error writing file '/workspace/a.md': storage error" {
		t.Errorf("Write = %v", err)
	}
	if _, err := fsys.Edit(ctx, "/workspace/a.md", "a", "b", false); errText(err) != "Error editing file '/workspace/a.md': storage error" || !errors.Is(err, errInternal) {
		t.Errorf("Edit = %v", err)
	}
	if _, err := fsys.LsInfo(ctx, "/workspace"); errText(err) != "Error listing file '/workspace': storage error" {
		t.Errorf("LsInfo = %v", err)
	}
	if _, err := fsys.GrepRaw(ctx, "x", "/", ""); errText(err) != "Error reading file '/': storage error" {
		t.Errorf("GrepRaw = %v", err)
	}
}

// TestCanceled: a canceled request fails with an *Error that unwraps to
// context.Canceled and says so.
func TestCanceled(t *testing.T) {
	st := newLocal(t)
	seed(t, st)
	fsys := newSession(t, st, "s1", vfs.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fsys.Read(ctx, "/ticket/ticket.md", 0, 0)
	if errText(err) != "Error reading file '/ticket/ticket.md': request canceled" || !errors.Is(err, context.Canceled) {
		t.Errorf("Read = %v", err)
	}
	if _, err := fsys.GrepRaw(ctx, "x", "/", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("GrepRaw = %v", err)
	}
	if err := fsys.Write(ctx, "/workspace/x", "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("Write = %v", err)
	}
	var e *vfs.Error
	if !errors.As(err, &e) {
		t.Errorf("not an *Error: %T", err)
	}
}
