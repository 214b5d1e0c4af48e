package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	skbucket "github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/testkit/testregistry"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// TestBucketRestorePackages: an approved version whose server is an npx
// launch keeps its fetched package in the bucket too (an archive, links
// and modes included); a replica without it restores the package tree,
// checked against the digest pinned for it; a tampered archive is not
// restored from.
func TestBucketRestorePackages(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	reg := testregistry.NewNPM(t)
	reg.Add(testregistry.NPMPackage{Name: "echo-mcp", Version: "1.0.0", Bin: map[string]string{"echo-mcp": "index.js"},
		Files: map[string]string{"index.js": testregistry.MCPServerJS("echo-mcp")}})
	for name, open := range buckets() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			bucket := open(t)
			fetcher := launch.NewFetcher(launch.Options{NPM: launch.NPMOptions{Registry: reg.URL()}})
			e := newEnv(t, install.Options{Bucket: bucket, Packages: fetcher})
			src := writeSkill(t, t.TempDir(), "echo", "---\nEcho.\n", map[string]any{"echo": map[string]any{"command": "npx", "args": []string{"-y", "echo-mcp@1.0.0"}}})
			r, err := e.svc.Install(ctx, src, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Approve(ctx, "echo", nil, "operator:ana"); err != nil {
				t.Fatal(err)
			}
			hex := strings.TrimPrefix(r.Digest, "sha256:")
			key := skbucket.DefaultImportsPrefix + "echo/" + hex + "/packages/echo.tar.gz"
			if _, _, err := bucket.Get(ctx, key); err != nil {
				t.Fatalf("the package is not in the bucket: %v", err)
			}
			pkgDir := filepath.Join(e.svc.Storage().VersionDir(r.Digest), install.PackagesDir, "echo")
			before := readTree(t, pkgDir)
			tree := r.Provenance.Packages[0].Tree

			replica := func() *install.Service {
				if err := os.RemoveAll(e.svc.Storage().Root); err != nil {
					t.Fatal(err)
				}
				svc, err := install.New(install.Options{Store: e.db, Root: e.svc.Storage().Root, Bucket: bucket})
				if err != nil {
					t.Fatal(err)
				}
				return svc
			}
			rec, err := replica().Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rec.Restored, []string{"echo"}) || len(rec.Lost) != 0 {
				t.Fatalf("recover: %+v", rec)
			}
			if got := readTree(t, pkgDir); !reflect.DeepEqual(got, before) {
				t.Fatalf("restored package:\n got %v\nwant %v", got, before)
			}
			if got, err := launch.TreeDigest(ctx, pkgDir); err != nil || got != tree {
				t.Fatalf("restored package digest %s, %v; pinned %s", got, err, tree)
			}
			if fi, err := os.Lstat(filepath.Join(pkgDir, "node_modules", ".bin", "echo-mcp")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the bin link was not restored as a link: %v %v", fi, err)
			}

			// An archive whose tree is not the pinned one is refused.
			other := t.TempDir()
			os.WriteFile(filepath.Join(other, "index.js"), []byte("evil()\n"), 0o644)
			var b strings.Builder
			if err := launch.WriteArchive(ctx, &b, other); err != nil {
				t.Fatal(err)
			}
			if err := bucket.Put(ctx, key, strings.NewReader(b.String()), int64(b.Len())); err != nil {
				t.Fatal(err)
			}
			rec, err = replica().Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Restored) != 0 || !reflect.DeepEqual(rec.Lost, []string{"echo"}) {
				t.Fatalf("recover from a tampered package: %+v", rec)
			}
		})
	}
}
