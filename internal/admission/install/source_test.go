package install_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store"
)

type entry struct {
	name, body string
	typ        byte // tar type; 0 = regular
	link       string
}

func tarGz(t testing.TB, es []entry) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.typ != 0 {
			h.Typeflag, h.Size, h.Linkname = e.typ, 0, e.link
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

func zipOf(t testing.TB, es []entry) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.typ == tar.TypeSymlink {
			h.SetMode(os.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	return b.Bytes()
}

const okMD = "---\nname: packed\ndescription: A packed skill.\n---\nBody.\n"

func TestReadArchives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		kind string
		es   []entry
		lim  install.SourceLimits
		want string // files, or the error
	}{
		{"tar with top dir", "tar.gz", []entry{{name: "packed/SKILL.md", body: okMD}, {name: "packed/scripts/run.sh", body: "echo"}, {name: "packed/.git/config", body: "x"}}, install.SourceLimits{},
			"packed: SKILL.md scripts/run.sh"},
		{"zip flat", "zip", []entry{{name: "SKILL.md", body: okMD}, {name: "ref.md", body: "r"}}, install.SourceLimits{}, "x: SKILL.md ref.md"},
		{"tar traversal", "tar.gz", []entry{{name: "SKILL.md", body: okMD}, {name: "../../etc/evil", body: "x"}}, install.SourceLimits{},
			`invalid install source: x: entry "../../etc/evil" leaves the archive (path traversal)`},
		{"zip slip", "zip", []entry{{name: "SKILL.md", body: okMD}, {name: "a/../../evil", body: "x"}}, install.SourceLimits{},
			`invalid install source: x: entry "a/../../evil" leaves the archive (path traversal)`},
		{"absolute", "tar.gz", []entry{{name: "/etc/passwd", body: "x"}}, install.SourceLimits{},
			`invalid install source: x: entry "/etc/passwd": absolute path (an archive may only hold relative paths)`},
		{"tar symlink", "tar.gz", []entry{{name: "SKILL.md", body: okMD}, {name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, install.SourceLimits{},
			`invalid install source: x: entry "link" is a link; an installable skill holds regular files only`},
		{"tar hard link", "tar.gz", []entry{{name: "SKILL.md", body: okMD}, {name: "hl", typ: tar.TypeLink, link: "SKILL.md"}}, install.SourceLimits{},
			`invalid install source: x: entry "hl" is a link; an installable skill holds regular files only`},
		{"tar device", "tar.gz", []entry{{name: "dev", typ: tar.TypeChar}}, install.SourceLimits{},
			`invalid install source: x: entry "dev" is not a regular file (type "3")`},
		{"zip symlink", "zip", []entry{{name: "SKILL.md", body: okMD}, {name: "l", body: "/etc/passwd", typ: tar.TypeSymlink}}, install.SourceLimits{},
			`invalid install source: x: entry "l" is a symbolic link; an installable skill holds regular files only`},
		{"too many files", "tar.gz", []entry{{name: "SKILL.md", body: okMD}, {name: "a", body: "1"}, {name: "b", body: "2"}}, install.SourceLimits{MaxFiles: 2},
			"invalid install source: x: more than 2 files"},
		{"too large", "zip", []entry{{name: "SKILL.md", body: okMD}, {name: "big", body: strings.Repeat("z", 5000)}}, install.SourceLimits{MaxBytes: 4096},
			`invalid install source: x: entry "big" claims 5000 bytes, more than 4096`},
		{"too deep", "tar.gz", []entry{{name: "a/b/c/d/SKILL.md", body: okMD}}, install.SourceLimits{MaxDepth: 3},
			`invalid install source: x: entry "a/b/c/d/SKILL.md" is deeper than 3 levels`},
		{"duplicate", "tar.gz", []entry{{name: "SKILL.md", body: okMD}, {name: "./SKILL.md", body: okMD}}, install.SourceLimits{},
			`invalid install source: x: entry "SKILL.md" appears twice`},
		{"not gzip", "tar.gz", nil, install.SourceLimits{}, "invalid install source: x: not a gzip file: EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var data []byte
			if tc.es != nil {
				if tc.kind == "zip" {
					data = zipOf(t, tc.es)
				} else {
					data = tarGz(t, tc.es)
				}
			}
			tr, err := install.ReadArchiveBytes(ctx, "x", tc.kind, data, tc.lim)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, install.ErrInvalidSource) {
					t.Errorf("error does not wrap ErrInvalidSource: %v", err)
				}
			} else {
				var names []string
				for p := range tr.Files {
					names = append(names, p)
				}
				sortStrings(names)
				got = tr.Name + ": " + strings.Join(names, " ")
			}
			if got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// TestInstallSources: directories with links, invalid skills and archives
// through Install.
func TestInstallSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, install.Options{})
	dir := t.TempDir()

	linked := writeSkill(t, dir, "linked", "---\nx\n", nil)
	os.Symlink("/etc/passwd", filepath.Join(linked, "passwd"))
	if _, err := e.svc.Install(ctx, linked, "operator:ana"); err == nil || !strings.Contains(err.Error(), "passwd is a symbolic link; skillgate never follows links in a skill (copy the file instead)") {
		t.Errorf("linked: %v", err)
	}
	// A hard link to a file outside the skill would copy that file in.
	hard := writeSkill(t, dir, "hard", "---\nx\n", nil)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("operator's secret"), 0o600)
	if err := os.Link(secret, filepath.Join(hard, "notes.md")); err != nil {
		t.Fatal(err)
	}
	wantHard := "invalid install source: " + hard + ": notes.md is a hard link (the file has 2 names); skillgate refuses hard links in a skill, since one can expose a file from outside it (copy the file instead)"
	if _, err := e.svc.Install(ctx, hard, "operator:ana"); err == nil || err.Error() != wantHard {
		t.Errorf("hard link:\n got %v\nwant %s", err, wantHard)
	}
	bad := filepath.Join(dir, "nodesc")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "SKILL.md"), []byte("---\nname: nodesc\n---\n"), 0o644)
	if _, err := e.svc.Install(ctx, bad, "operator:ana"); !errors.Is(err, install.ErrInvalidSkill) || !strings.Contains(err.Error(), "nodesc/SKILL.md: ") {
		t.Errorf("invalid skill: %v", err)
	}
	badcfg := writeSkill(t, dir, "badcfg", "---\nx\n", nil)
	os.WriteFile(filepath.Join(badcfg, "mcp.json"), []byte(`{"mcpServers":{"a":{"command":"x","bogus":1}}}`), 0o644)
	if _, err := e.svc.Install(ctx, badcfg, "operator:ana"); !errors.Is(err, install.ErrInvalidSkill) || !strings.Contains(err.Error(), "badcfg/mcp.json: invalid mcp.json") {
		t.Errorf("bad mcp.json: %v", err)
	}
	if _, err := e.svc.Install(ctx, filepath.Join(dir, "nothing.rar"), "operator:ana"); !errors.Is(err, install.ErrInvalidSource) {
		t.Errorf("missing: %v", err)
	}

	// A .tar.gz and a .zip of the same skill are the same version.
	tgz := filepath.Join(dir, "packed.tar.gz")
	os.WriteFile(tgz, tarGz(t, []entry{{name: "packed/SKILL.md", body: okMD}}), 0o644)
	r, err := e.svc.Install(ctx, tgz, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if r.Key != "packed" || r.State != store.StateAwaitingApproval {
		t.Errorf("tar.gz install: %s %s %s", r.Key, r.State, r.Reason)
	}
	zp := filepath.Join(dir, "packed.zip")
	os.WriteFile(zp, zipOf(t, []entry{{name: "SKILL.md", body: okMD}}), 0o644)
	if _, err := e.svc.Install(ctx, zp, "operator:ana"); !errors.Is(err, install.ErrState) || !strings.Contains(err.Error(), "is already awaiting_approval") {
		t.Errorf("same version again: %v", err)
	}
	// Installing never enables.
	if en, _ := e.svc.Enabled(ctx); len(en) != 0 {
		t.Errorf("enabled after install: %v", en)
	}
}
