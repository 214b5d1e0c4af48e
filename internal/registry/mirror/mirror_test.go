package mirror_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/mirror"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/blobtest"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

func stores() map[string]func(t *testing.T) blob.Store {
	return blobtest.Stores("mirror")
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sk(name, body string) string {
	return "---\nname: " + name + "\ndescription: " + name + " does things.\n---\n" + body + "\n"
}

// short is a Report without its failures' text.
type short struct{ Skills, Uploaded, Unchanged, Removed, Failed int }

// TestMirror mirrors a root, again unchanged, after a change and after a
// deletion, and serves a mirrored skill whose directory is gone.
func TestMirror(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			root := t.TempDir()
			write(t, root, map[string]string{
				"escrituras/compraventa/SKILL.md":         sk("compraventa", "Body."),
				"escrituras/compraventa/resources/eje.md": "Ejemplo.\n",
				"pdf/SKILL.md": sk("pdf", "PDF."),
				"bad/SKILL.md": "---\nname: bad\n---\nno description\n",
			})
			db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			reg := registry.New(db, registry.Options{})
			step := func(t *testing.T) short {
				t.Helper()
				if _, err := reg.Scan(ctx, []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil); err != nil {
					t.Fatal(err)
				}
				vs, err := reg.Versions(ctx, store.Filter{})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := mirror.Mirror(ctx, st, bucket.DefaultMirrorPrefix, vs, nil)
				if err != nil {
					t.Fatal(err)
				}
				return short{rep.Skills, rep.Uploaded, rep.Unchanged, rep.Removed, len(rep.Failed)}
			}
			if got, want := step(t), (short{Skills: 2, Uploaded: 2}); got != want {
				t.Fatalf("first: got %+v, want %+v", got, want)
			}
			objs, _ := st.List(ctx, bucket.DefaultMirrorPrefix, 0)
			if len(objs) != 5 { // 3 files and 2 markers
				t.Fatalf("bucket after the first mirroring: %d objects: %+v", len(objs), objs)
			}
			if got, want := step(t), (short{Skills: 2, Unchanged: 2}); got != want {
				t.Fatalf("unchanged: got %+v, want %+v", got, want)
			}
			write(t, root, map[string]string{"pdf/SKILL.md": sk("pdf", "PDF, changed.")})
			if got, want := step(t), (short{Skills: 2, Uploaded: 1, Unchanged: 1, Removed: 1}); got != want {
				t.Fatalf("changed: got %+v, want %+v", got, want)
			}

			// A process without the directory serves the skill from the
			// mirror, exactly the scanned files.
			vs, _ := reg.Versions(ctx, store.Filter{Key: "escrituras/compraventa"})
			if err := os.RemoveAll(filepath.Join(root, "escrituras")); err != nil {
				t.Fatal(err)
			}
			src := &session.BlobSource{Store: st, Mirror: bucket.DefaultMirrorPrefix, Local: session.LocalSource{Verified: &session.Verified{}}}
			ms, prefix, err := src.Mount(ctx, "acme", vs[0])
			if err != nil {
				t.Fatal(err)
			}
			files, _ := ms.List(ctx, prefix, 0)
			var keys []string
			for _, f := range files {
				keys = append(keys, strings.TrimPrefix(f.Key, prefix))
			}
			if want := []string{"SKILL.md", "resources/eje.md"}; !reflect.DeepEqual(keys, want) {
				t.Fatalf("mounted from the mirror: %q, want %q", keys, want)
			}
			body, _, err := blob.ReadAll(ctx, ms, prefix+"resources/eje.md", 0)
			if err != nil || string(body) != "Ejemplo.\n" {
				t.Fatalf("read from the mirror: %q, %v", body, err)
			}

			if got, want := step(t), (short{Skills: 1, Unchanged: 1, Removed: 1}); got != want {
				t.Fatalf("deleted: got %+v, want %+v", got, want)
			}
			objs, _ = st.List(ctx, bucket.DefaultMirrorPrefix, 0)
			if len(objs) != 2 {
				t.Fatalf("bucket after the deletion: %+v", objs)
			}
		})
	}
}
