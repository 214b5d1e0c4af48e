package install_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/blobtest"
	skbucket "github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// buckets are the stores the bucket tests run against: a local directory,
// and the S3 server of scripts/setup-s3.sh when it is configured.
func buckets() map[string]func(t *testing.T) blob.Store {
	return blobtest.Stores("install")
}

// TestBucketRestore approves an install with a bucket, loses the managed
// directory (a replica that never had it), and restores it from the
// bucket; then a tampered bucket is refused.
func TestBucketRestore(t *testing.T) {
	for name, open := range buckets() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			bucket := open(t)
			e := newEnv(t, install.Options{Bucket: bucket})
			src := writeSkill(t, t.TempDir(), "notes", "---\nTake notes.\n", nil)
			if err := os.WriteFile(filepath.Join(src, "template.md"), []byte("# Notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := e.svc.Install(ctx, src, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Approve(ctx, "notes", nil, "operator:ana"); err != nil {
				t.Fatal(err)
			}
			hex := strings.TrimPrefix(r.Digest, "sha256:")
			objs, err := bucket.List(ctx, skbucket.DefaultImportsPrefix, 0)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range objs {
				keys = append(keys, strings.TrimPrefix(o.Key, skbucket.DefaultImportsPrefix))
			}
			want := []string{"notes/" + hex + ".json", "notes/" + hex + "/install_report.json", "notes/" + hex + "/manifest.json",
				"notes/" + hex + "/manifest.proposed.json", "notes/" + hex + "/skill/SKILL.md", "notes/" + hex + "/skill/template.md"}
			if !reflect.DeepEqual(keys, want) {
				t.Fatalf("bucket:\n got %q\nwant %q", keys, want)
			}
			dir := e.svc.Storage().VersionDir(r.Digest)
			before := readTree(t, dir)

			// Another replica: the same store, no managed directory.
			if err := os.RemoveAll(e.svc.Storage().Root); err != nil {
				t.Fatal(err)
			}
			svc, err := install.New(install.Options{Store: e.db, Root: e.svc.Storage().Root, Bucket: bucket})
			if err != nil {
				t.Fatal(err)
			}
			rec, err := svc.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rec.Restored, []string{"notes"}) || len(rec.Lost) != 0 {
				t.Fatalf("recover: %+v", rec)
			}
			if got := readTree(t, dir); !reflect.DeepEqual(got, before) {
				t.Fatalf("restored tree:\n got %v\nwant %v", got, before)
			}
			ins, err := e.db.Installs(ctx, store.InstallFilter{})
			if err != nil || len(ins) != 1 || ins[0].State != store.StateInstalled {
				t.Fatalf("install after the restore: %+v, %v", ins, err)
			}

			// A replica running while another approved: RestoreMissing
			// brings the tree back without a restart.
			if err := os.RemoveAll(e.svc.Storage().Root); err != nil {
				t.Fatal(err)
			}
			got, err := svc.RestoreMissing(ctx)
			if err != nil || !reflect.DeepEqual(got, []string{"notes"}) {
				t.Fatalf("RestoreMissing = %q, %v", got, err)
			}
			if got := readTree(t, dir); !reflect.DeepEqual(got, before) {
				t.Fatalf("tree restored while running:\n got %v\nwant %v", got, before)
			}
			if got, err := svc.RestoreMissing(ctx); err != nil || got != nil {
				t.Fatalf("RestoreMissing with nothing missing = %q, %v", got, err)
			}

			// A bucket whose tree no longer has the version's digest is
			// not restored from: the install is lost, as without a bucket.
			tampered := "# Notes, altered\n"
			if err := bucket.Put(ctx, skbucket.DefaultImportsPrefix+"notes/"+hex+"/skill/template.md", strings.NewReader(tampered), int64(len(tampered))); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(e.svc.Storage().Root); err != nil {
				t.Fatal(err)
			}
			rec, err = svc.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Restored) != 0 || !reflect.DeepEqual(rec.Lost, []string{"notes"}) {
				t.Fatalf("recover from a tampered bucket: %+v", rec)
			}
			if _, err := os.Stat(filepath.Join(dir, install.SkillDir)); !os.IsNotExist(err) {
				t.Fatalf("a tampered tree was left in managed storage: %v", err)
			}
		})
	}
}

// readTree reads every file under dir, by slash-separated path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
