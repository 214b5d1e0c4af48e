package manifest_test

import (
	"testing"

	"github.com/skillgate/skillgate/internal/admission/manifest"
)

// FuzzParse feeds hostile bytes to the strict artefact parsers: they must
// never panic, and what they accept must marshal and parse again to the
// same bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"a","version":"sha256:00","providers":[],"capabilities":[]}`))
	f.Add([]byte(`{"$schema":"https://skillgate.dev/schemas/install_report.v1.json","skillId":"a","version":"sha256:00"}`))
	f.Add([]byte("{\"skillId\":\"a\",\"skillid\":\"b\"}"))
	f.Add([]byte("{\"skillId\":\"\x00\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := manifest.Parse(data); err == nil {
			b, err := manifest.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := manifest.Parse(b)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, b)
			}
			b2, _ := manifest.Marshal(m2)
			if string(b) != string(b2) {
				t.Fatalf("not stable:\n%s\n%s", b, b2)
			}
		}
		if r, err := manifest.ParseReport(data); err == nil {
			b, err := manifest.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := manifest.ParseReport(b); err != nil {
				t.Fatalf("re-parse report: %v\n%s", err, b)
			}
		}
	})
}
