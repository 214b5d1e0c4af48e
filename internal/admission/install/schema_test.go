package install_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/admission/manifest"
)

var (
	schemaOnce             sync.Once
	manifestSch, reportSch *jsonschema.Schema
	schemaErr              error
)

// schemas compiles docs/schemas once.
func schemas(t *testing.T) (*jsonschema.Schema, *jsonschema.Schema) {
	t.Helper()
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		for _, f := range []struct{ file, id string }{
			{"manifest.v1.json", manifest.SchemaManifest},
			{"install_report.v1.json", manifest.SchemaReport},
		} {
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schemas", f.file))
			if err != nil {
				schemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemaErr = err
				return
			}
			if err := c.AddResource(f.id, doc); err != nil {
				schemaErr = err
				return
			}
		}
		if manifestSch, schemaErr = c.Compile(manifest.SchemaManifest); schemaErr != nil {
			return
		}
		reportSch, schemaErr = c.Compile(manifest.SchemaReport)
	})
	if schemaErr != nil {
		t.Fatal(schemaErr)
	}
	return manifestSch, reportSch
}

// checkSchemas validates every artefact in a version directory against
// docs/schemas and parses it back strictly.
func checkSchemas(t *testing.T, dir string) {
	t.Helper()
	ms, rs := schemas(t)
	n := 0
	for _, f := range []struct {
		name string
		sch  *jsonschema.Schema
	}{{manifest.FileProposed, ms}, {manifest.FileApproved, ms}, {manifest.FileReport, rs}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if err := f.sch.Validate(v); err != nil {
			t.Errorf("%s does not match its schema: %v", f.name, err)
		}
		if f.sch == rs {
			_, err = manifest.ParseReport(b)
		} else {
			_, err = manifest.Parse(b)
		}
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
		}
	}
	if n < 2 {
		t.Errorf("%s: only %d artefacts", dir, n)
	}
}
