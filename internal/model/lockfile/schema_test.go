package lockfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/model/lockfile"
)

// TestSchema: what Marshal writes validates against the published
// docs/schemas/lock.v1.json.
func TestSchema(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schemas", "lock.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(lockfile.Schema, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(lockfile.Schema)
	if err != nil {
		t.Fatal(err)
	}
	f := lockfile.New([]lockfile.Entry{
		{Key: "triage", Origin: lockfile.OriginInstall, Trust: "imported", Source: "git+https://git.example.com/s.git", Ref: "v1", Commit: c1, Path: "triage", Digest: d1, Signer: "Vendor", Pins: map[string]string{"gh": d2}},
		{Key: "pdf/pdf-tools", Origin: lockfile.OriginRoot, Trust: "first_party", Source: "/srv/skills", Digest: d2},
		{Key: "x", Origin: lockfile.OriginInstall, Source: "https://example.com/x.tar.gz", ArchiveSHA256: strings.Repeat("c", 64), Digest: d1},
	})
	for _, tc := range []struct {
		f    *lockfile.File
		want bool
	}{{f, true}, {lockfile.New(nil), true}} {
		b, err := tc.f.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != tc.want {
			t.Fatalf("validate %s: %v", b, err)
		}
	}
}
