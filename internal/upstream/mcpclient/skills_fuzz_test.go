package mcpclient_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// FuzzSkillsPage feeds hostile skills/list results to the page parser and
// each entry to the check that decides which files to read. The seed
// corpus is in testdata/fuzz/FuzzSkillsPage. Properties: it never panics;
// what is accepted for reading is SKILL.md and files under its root, each
// once, within the extension's limits.
func FuzzSkillsPage(f *testing.F) {
	f.Add([]byte(`{"skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":3}]}],"nextCursor":"x"}`))
	f.Add([]byte(`{"skills":[{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":"dynamic"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _, err := mcpclient.ParseSkillsPageForTest(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			uri, files, err := mcpclient.EntryFilesOfForTest(e)
			if err != nil {
				if len(err.Error()) > 2048 {
					t.Fatalf("error message is %d bytes", len(err.Error()))
				}
				continue
			}
			if len(files) > mcpclient.MaxSkillFiles {
				t.Fatalf("%d files accepted", len(files))
			}
			root := strings.TrimSuffix(uri, "/SKILL.md")
			seen := map[string]bool{}
			for _, f := range files {
				if f != uri && !strings.HasPrefix(f, root+"/") {
					t.Fatalf("file %q outside %q accepted", f, root)
				}
				if seen[f] {
					t.Fatalf("file %q accepted twice", f)
				}
				seen[f] = true
			}
			if files != nil && !seen[uri] {
				t.Fatalf("files %q accepted without %q", files, uri)
			}
		}
	})
}

// FuzzResourceBytes feeds hostile resources/read results to ResourceBytes.
// Properties: it never panics, and accepts only one content item for the
// URI asked.
func FuzzResourceBytes(f *testing.F) {
	f.Add([]byte(`{"contents":[{"uri":"skill://a/SKILL.md","text":"hi"}]}`), "skill://a/SKILL.md")
	f.Add([]byte(`{"contents":[{"uri":"skill://a/x.bin","blob":"aGk="}]}`), "skill://a/x.bin")
	f.Fuzz(func(t *testing.T, data []byte, uri string) {
		b, err := mcpclient.ResourceBytes(data, uri)
		if err != nil {
			return
		}
		var r struct {
			Contents []struct {
				URI string `json:"uri"`
			} `json:"contents"`
		}
		if json.Unmarshal(data, &r) != nil || len(r.Contents) != 1 || r.Contents[0].URI != uri {
			t.Fatalf("accepted %q for %q: %q", data, uri, b)
		}
	})
}
