package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

// TestSeedWalkthrough replays the complete example of seed 003 over each
// store, with exact outputs.
func TestSeedWalkthrough(t *testing.T) {
	forEachStore(t, func(t *testing.T, st blob.Store) {
		ctx := context.Background()
		seed(t, st)
		fsys := newSession(t, st, "s1", vfs.Options{})

		// 1. No skills loaded: /skills is not listed.
		if got, want := lsPaths(t, fsys, "/"), []string{"/ticket/", "/workspace/"}; !slices.Equal(got, want) {
			t.Fatalf("ls / = %q, want %q", got, want)
		}
		if got := lsPaths(t, fsys, "/skills"); len(got) != 0 {
			t.Fatalf("ls /skills before loading = %q, want empty", got)
		}
		if _, err := fsys.Read(ctx, "/skills/compraventa/SKILL.md", 0, 0); errText(err) != "Error: File '/skills/compraventa/SKILL.md' not found" {
			t.Fatalf("read before loading = %v", err)
		}

		// 3. load_skill escrituras/compraventa.
		if err := fsys.SetSkills([]vfs.SkillMount{skill(t, st, "compraventa", "escrituras", "compraventa")}); err != nil {
			t.Fatal(err)
		}
		// 4. The skill is visible.
		steps := []struct {
			path string
			want []string
		}{
			{"/", []string{"/skills/", "/ticket/", "/workspace/"}},
			{"/skills", []string{"/skills/compraventa/"}},
			{"/skills/compraventa", []string{"/skills/compraventa/SKILL.md", "/skills/compraventa/disclosure_clausulas.md", "/skills/compraventa/resources/"}},
			{"/skills/compraventa/resources", []string{"/skills/compraventa/resources/ejemplo.md", "/skills/compraventa/resources/plantilla.pdf"}},
			{"/skills/compraventa/resources/", []string{"/skills/compraventa/resources/ejemplo.md", "/skills/compraventa/resources/plantilla.pdf"}},
			{"/ticket", []string{"/ticket/ticket.md"}},
			{"/skills/hipoteca", nil},
			{"/skills/escrituras", nil},
			{"/skills/compraventa/SKILL.md", nil},
		}
		for _, s := range steps {
			if got := lsPaths(t, fsys, s.path); !slices.Equal(got, s.want) {
				t.Errorf("ls %s = %q, want %q", s.path, got, s.want)
			}
		}
		l, err := fsys.LsInfo(ctx, "/skills/compraventa/resources")
		if err != nil {
			t.Fatal(err)
		}
		if e := l.Entries[1]; e.IsDir || e.Size != int64(len(pdfBytes)) || e.ModifiedAt == "" {
			t.Errorf("ls entry = %+v, want a file of %d bytes with a time", e, len(pdfBytes))
		}
		if got := vfs.FormatLs(l); got != "['/skills/compraventa/resources/ejemplo.md', '/skills/compraventa/resources/plantilla.pdf']" {
			t.Errorf("FormatLs = %s", got)
		}

		// 6–7. Reads return cat -n text.
		reads := []struct{ path, want string }{
			{"/skills/compraventa/SKILL.md", "     1\t---\n     2\tname: compraventa\n     3\tdescription: Escrituras de compraventa de inmuebles\n     4\tcategory: escrituras\n     5\t---\n     6\t# Compraventa\n     7\t\n     8\tLee disclosure_clausulas.md antes de redactar."},
			{"/skills/compraventa/disclosure_clausulas.md", "     1\t# Cláusulas\n     2\t\n     3\t1. Precio y forma de pago.\n     4\t2. Cargas y gravámenes."},
			{"/skills/compraventa/resources/ejemplo.md", "     1\t# Ejemplo\n     2\t\n     3\tEscritura de compraventa otorgada en Madrid."},
			{"/ticket/ticket.md", "     1\tTicket T-1: compraventa de un piso en Madrid."},
		}
		for _, r := range reads {
			got, err := fsys.Read(ctx, r.path, 0, 0)
			if err != nil || got != r.want {
				t.Errorf("read %s = %q, %v\nwant %q", r.path, got, err, r.want)
			}
		}

		// 8. The PDF: a clear binary error that says it exists.
		_, err = fsys.Read(ctx, "/skills/compraventa/resources/plantilla.pdf", 0, 0)
		want := fmt.Sprintf("Error: '/skills/compraventa/resources/plantilla.pdf' is a binary file (application/pdf, %d bytes) and cannot be read as text. Refer to it by path.", len(pdfBytes))
		if errText(err) != want || !errors.Is(err, vfs.ErrBinary) {
			t.Errorf("read pdf = %v\nwant %s", err, want)
		}

		// Not loaded, or not a skill path: exactly a missing file.
		for _, p := range []string{
			"/skills/hipoteca/SKILL.md",
			"/skills/escrituras/compraventa/SKILL.md",
			"/skills/venta/SKILL.md",
			"/skills/compraventa/nope.md",
			"/skills/arrendamiento/SKILL.md",
		} {
			_, err := fsys.Read(ctx, p, 0, 0)
			if want := "Error: File '" + p + "' not found"; errText(err) != want || !errors.Is(err, vfs.ErrNotFound) {
				t.Errorf("read %s = %v, want %q", p, err, want)
			}
		}
		// grep and glob reach only the loaded skill.
		res, err := fsys.GrepRaw(ctx, "Hipoteca", "/", "")
		if err != nil || len(res.Matches) != 0 {
			t.Errorf("grep Hipoteca = %+v, %v; want nothing (not loaded)", res, err)
		}
		res, err = fsys.GrepRaw(ctx, "compraventa", "/", "*.md")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := vfs.FormatGrep(res, vfs.GrepCount), "/skills/compraventa/SKILL.md: 2\n/skills/compraventa/resources/ejemplo.md: 1\n/ticket/ticket.md: 1"; got != want {
			t.Errorf("grep count =\n%s\nwant\n%s", got, want)
		}
		g, err := fsys.GlobInfo(ctx, "**/SKILL.md", "/")
		if err != nil {
			t.Fatal(err)
		}
		if got := vfs.FormatGlob(g); got != "/skills/compraventa/SKILL.md" {
			t.Errorf("glob **/SKILL.md = %q", got)
		}

		// Unloading hides it again.
		if err := fsys.SetSkills(nil); err != nil {
			t.Fatal(err)
		}
		if got := lsPaths(t, fsys, "/"); !slices.Equal(got, []string{"/ticket/", "/workspace/"}) {
			t.Errorf("ls / after unload = %q", got)
		}
		if _, err := fsys.Read(ctx, "/skills/compraventa/SKILL.md", 0, 0); !errors.Is(err, vfs.ErrNotFound) {
			t.Errorf("read after unload = %v, want not found", err)
		}
	})
}

// TestSameLeafNameNoCollision: two loaded skills named compraventa in
// different categories are mounted under distinct names chosen by the
// session layer, and each serves its own files; no suffix matching.
func TestSameLeafNameNoCollision(t *testing.T) {
	forEachStore(t, func(t *testing.T, st blob.Store) {
		ctx := context.Background()
		seed(t, st)
		fsys := newSession(t, st, "s1", vfs.Options{})
		err := fsys.SetSkills([]vfs.SkillMount{
			skill(t, st, "compraventa", "escrituras", "compraventa"),
			skill(t, st, "contratos-compraventa", "contratos", "compraventa"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := lsPaths(t, fsys, "/skills"); !slices.Equal(got, []string{"/skills/compraventa/", "/skills/contratos-compraventa/"}) {
			t.Errorf("ls /skills = %q", got)
		}
		a, err := fsys.Read(ctx, "/skills/compraventa/SKILL.md", 3, 1)
		if err != nil || a != "     4\tcategory: escrituras" {
			t.Errorf("read escrituras = %q, %v", a, err)
		}
		b, err := fsys.Read(ctx, "/skills/contratos-compraventa/SKILL.md", 2, 1)
		if err != nil || b != "     3\tdescription: Contratos privados de compraventa" {
			t.Errorf("read contratos = %q, %v", b, err)
		}
		// A suffix of a loaded name is not a loaded name.
		for _, p := range []string{"/skills/venta/SKILL.md", "/skills/compraventa2/SKILL.md", "/skills/Compraventa/SKILL.md"} {
			if _, err := fsys.Read(ctx, p, 0, 0); !errors.Is(err, vfs.ErrNotFound) {
				t.Errorf("read %s = %v, want not found", p, err)
			}
		}
		if err := fsys.SetSkills([]vfs.SkillMount{
			skill(t, st, "compraventa", "escrituras", "compraventa"),
			skill(t, st, "compraventa", "contratos", "compraventa"),
		}); err == nil {
			t.Error("SetSkills with a duplicate name succeeded")
		}
		if got := fsys.Skills(); !slices.Equal(got, []string{"compraventa", "contratos-compraventa"}) {
			t.Errorf("a refused SetSkills changed the skills: %q", got)
		}
	})
}
