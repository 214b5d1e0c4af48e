package install_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
)

// FuzzVerifyPublished feeds hostile skill entries, and a hostile SKILL.md
// served for them, to the verification of published skills. The seed
// corpus is in testdata/fuzz/FuzzVerifyPublished. Properties: it never
// panics; a skill is ready only without problems, with a set digest over
// its files, a skill:// URI whose last skill-path segment is its name, and
// a SKILL.md whose bytes and frontmatter match the entry.
func FuzzVerifyPublished(f *testing.F) {
	md := "---\nname: a\ndescription: d\n---\nbody\n"
	f.Add([]byte(`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:`+sha(md)+`","size":34}]}`), []byte(md))
	f.Add([]byte(`{"uri":"skill://x/a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`), []byte(md))
	f.Fuzz(func(t *testing.T, entry, skillMD []byte) {
		var probe struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(entry, &probe)
		p := install.VerifyEntryForTest(entry, map[string][]byte{probe.URI: skillMD})
		// Whatever it is, the report that records it reads back.
		rep := &manifest.Report{Schema: manifest.SchemaReport, SkillID: "k", Version: "sha256:" + sha(""),
			Servers: []manifest.ServerResult{}, Capabilities: []manifest.CapabilityReport{}, PublishedSkills: []manifest.PublishedSkill{p}}
		b, err := manifest.Marshal(rep)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := manifest.ParseReport(b); err != nil {
			t.Fatalf("the report does not read back: %v\n%s", err, b)
		}
		switch p.Status {
		case manifest.SkillBlocked:
			if len(p.Problems) == 0 {
				t.Fatal("blocked without a problem")
			}
			return
		case manifest.SkillReady, manifest.SkillDynamic:
		default:
			t.Fatalf("status %q", p.Status)
		}
		if len(p.Problems) > 0 {
			t.Fatalf("%s with problems %q", p.Status, p.Problems)
		}
		if !strings.HasPrefix(p.URI, "skill://") || !strings.HasSuffix(p.URI, "/"+p.Name+"/SKILL.md") && p.URI != "skill://"+p.Name+"/SKILL.md" {
			t.Fatalf("%s accepted with name %q", p.URI, p.Name)
		}
		if p.Status == manifest.SkillReady && (p.SetDigest != manifest.ResourceSetDigest(p.Resources) || p.SetDigest == "") {
			t.Fatalf("ready without its set digest: %+v", p)
		}
	})
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
