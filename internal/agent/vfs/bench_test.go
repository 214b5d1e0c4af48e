package vfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
)

// Benchmarks for bench/ (the lead's script wraps them):
//
//	go test -run '^$' -bench . -benchmem ./internal/agent/vfs/
//
// BenchmarkRead100KB vs BenchmarkRead100KBOSReadFile compares Read through
// the whole stack (path resolution, os.Root, binary check, formatting) with
// os.ReadFile plus the same formatting. BenchmarkGrep10kFiles greps 10,000
// skill files; set SKILLGATE_BENCH_DIR to keep the tree there, so that
// `rg -F needle "$SKILLGATE_BENCH_DIR/grep10k"` can run over the same files.

const benchSessionID = "bench"

// read100KB returns ~100 KB of text: 2,000 lines of 50 bytes (the default
// read limit, so the whole file is formatted).
func read100KB() string {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "%05d La parte vendedora transmite la finca libre.\n", i)
	}
	return b.String()
}

func benchRoot(b *testing.B, name string) (string, bool) {
	if dir := os.Getenv("SKILLGATE_BENCH_DIR"); dir != "" {
		p := filepath.Join(dir, name)
		_, err := os.Stat(filepath.Join(p, ".complete"))
		return p, err == nil
	}
	return filepath.Join(b.TempDir(), name), false
}

func BenchmarkRead100KB(b *testing.B) {
	root := b.TempDir()
	content := read100KB()
	key := "acme/sessions/" + benchSessionID + "/workspace/big.md"
	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, key)), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, key), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	st, err := local.Open(root, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	fsys := newSession(b, st, benchSessionID, vfs.Options{})
	ctx := context.Background()
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := fsys.Read(ctx, "/workspace/big.md", 0, 0)
		if err != nil || len(out) < len(content) {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead100KBOSReadFile(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.md")
	content := read100KB()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		out, err := vfs.FormatContent(data, 0, 0)
		if err != nil || len(out) < len(content) {
			b.Fatal(err)
		}
	}
}

// grepTree writes 10,000 skill files: 100 skills × (SKILL.md + 99 files in
// 3 sub-directories), 1–3 KB each; 1 file in 50 contains "needle".
func grepTree(b *testing.B) string {
	root, done := benchRoot(b, "grep10k")
	if done {
		return root
	}
	line := "Cláusula de saneamiento por evicción y vicios ocultos conforme al Código Civil.\n"
	for s := range 100 {
		dir := filepath.Join(root, "acme", "skills", "escrituras", fmt.Sprintf("skill%03d", s))
		for f := range 100 {
			var name string
			switch {
			case f == 0:
				name = "SKILL.md"
			default:
				name = filepath.Join([]string{"references", "resources", "notes"}[f%3], fmt.Sprintf("doc%03d.md", f))
			}
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			var body strings.Builder
			n := 12 + (s*7+f*13)%25
			for i := range n {
				if (s*100+f)%50 == 0 && i == n/2 {
					body.WriteString("Aquí está la needle que buscamos.\n")
				}
				body.WriteString(line)
			}
			if err := os.WriteFile(p, []byte(body.String()), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

func BenchmarkGrep10kFiles(b *testing.B) {
	root := grepTree(b)
	st, err := local.Open(root, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var skills []vfs.SkillMount
	for s := range 100 {
		name := fmt.Sprintf("skill%03d", s)
		skills = append(skills, skill(b, st, name, "escrituras", name))
	}
	fsys := newSession(b, st, benchSessionID, vfs.Options{Skills: skills})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := fsys.GrepRaw(ctx, "needle", "/skills", "")
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Matches) != 200 {
			b.Fatalf("%d matches, want 200", len(res.Matches))
		}
	}
}
