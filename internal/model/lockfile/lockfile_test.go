package lockfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/lockfile"
)

var (
	d1 = "sha256:" + strings.Repeat("1", 64)
	d2 = "sha256:" + strings.Repeat("2", 64)
	c1 = strings.Repeat("a", 40)
	c2 = strings.Repeat("b", 40)
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	f := lockfile.New([]lockfile.Entry{
		{Key: "triage", Origin: lockfile.OriginInstall, Trust: "imported", Source: "https://git.example.com/s.git", Ref: "v1", Commit: c1, Path: "triage", Digest: d1, Pins: map[string]string{"gh": d2}},
		{Key: "pdf/pdf-tools", Origin: lockfile.OriginRoot, Trust: "first_party", Source: "/srv/skills", Digest: d2, Signer: "Release team"},
	})
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "schema": "https://skillgate.dev/schemas/lock.v1.json",
  "skills": [
    {
      "key": "triage",
      "origin": "install",
      "trust": "imported",
      "source": "https://git.example.com/s.git",
      "ref": "v1",
      "commit": "` + c1 + `",
      "path": "triage",
      "digest": "` + d1 + `",
      "pins": {
        "gh": "` + d2 + `"
      }
    },
    {
      "key": "pdf/pdf-tools",
      "origin": "root",
      "trust": "first_party",
      "source": "/srv/skills",
      "digest": "` + d2 + `",
      "signer": "Release team"
    }
  ]
}
`
	if string(b) != want {
		t.Fatalf("marshal:\n%s", b)
	}
	back, err := lockfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := lockfile.Compare(f, back); len(d) != 0 {
		t.Fatalf("round trip differs: %v", d)
	}
}

func TestParseRefusals(t *testing.T) {
	t.Parallel()
	head := `{"schema":"https://skillgate.dev/schemas/lock.v1.json","skills":[`
	for _, tc := range []struct{ in, msg string }{
		{`{"schema":"x","skills":[]}`, `invalid lock file: schema "x", expected "https://skillgate.dev/schemas/lock.v1.json"`},
		{head + `{"key":"a","origin":"root","source":"/s","digest":"sha256:12"}]}`, `invalid lock file: skills[0] (a): digest "sha256:12" is not sha256:<64 hex digits>`},
		{head + `{"key":"a","origin":"cloud","source":"/s","digest":"` + d1 + `"}]}`, `invalid lock file: skills[0] (a): origin "cloud": use root or install`},
		{head + `{"key":"a","origin":"root","source":"","digest":"` + d1 + `"}]}`, `invalid lock file: skills[0] (a): source is required`},
		{head + `{"key":"a","origin":"install","source":"/s","commit":"main","digest":"` + d1 + `"}]}`, `invalid lock file: skills[0] (a): commit "main" is not a full commit id`},
		{head + `{"key":"a","origin":"root","source":"/s","digest":"` + d1 + `"},{"key":"a","origin":"root","source":"/s","digest":"` + d1 + `"}]}`, `invalid lock file: skills[1] (a): listed twice`},
		{head + `{"key":"a","origin":"root","source":"/s","digest":"` + d1 + `","extra":1}]}`, `invalid lock file: `},
		{head + `{"key":"a","origin":"root","source":"/s","digest":"` + d1 + `","pins":{"gh":"x"}}]}`, `invalid lock file: skills[0] (a): pins["gh"] "x" is not sha256:<64 hex digits>`},
		{head + `{"key":"a","origin":"install","source":"/s","digest":"` + d1 + `","publishedSkills":{"docs/skill://a/SKILL.md":"static"}}]}`,
			`invalid lock file: skills[0] (a): publishedSkills["docs/skill://a/SKILL.md"] "static" is not sha256:<64 hex digits> or "dynamic"`},
		{head + `{"key":"a","origin":"install","source":"/s","digest":"` + d1 + `","packages":{"mem":{"ecosystem":"maven","name":"x","version":"1","integrity":"sha512-x"}}}]}`,
			`invalid lock file: skills[0] (a): packages["mem"].ecosystem "maven": use npm or pypi`},
		{head + `{"key":"a","origin":"install","source":"/s","digest":"` + d1 + `","packages":{"mem":{"ecosystem":"npm","name":"x","version":"1 || 2","integrity":"sha512-x"}}}]}`,
			`invalid lock file: skills[0] (a): packages["mem"].version "1 || 2" must be 1 to 256 printable characters without spaces`},
		{head + `{"key":"a","origin":"install","source":"/s","digest":"` + d1 + `","packages":{"mem":{"ecosystem":"npm","name":"x","version":"1"}}}]}`,
			`invalid lock file: skills[0] (a): packages["mem"].integrity "" must be 1 to 256 printable characters without spaces`},
		{head + `{"key":"a","origin":"install","source":"/s","digest":"` + d1 + `","packages":{"":{"ecosystem":"npm","name":"x","version":"1","integrity":"sha512-x"}}}]}`,
			`invalid lock file: skills[0] (a): packages[""]: the key must be a server id`},
		{`{"schema":`, `invalid lock file: `},
	} {
		_, err := lockfile.Parse([]byte(tc.in))
		if !errors.Is(err, lockfile.ErrInvalid) || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("Parse(%s) = %v, want %q", tc.in, err, tc.msg)
		}
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	locked := lockfile.New([]lockfile.Entry{
		{Key: "a", Origin: lockfile.OriginInstall, Source: "file:///r", Ref: "main", Commit: c1, Digest: d1, Pins: map[string]string{"s": d1},
			PublishedSkills: map[string]string{"s/skill://x/SKILL.md": d1, "s/skill://y/SKILL.md": "dynamic"},
			Packages:        map[string]lockfile.Package{"s": {Ecosystem: "npm", Name: "echo-mcp", Version: "1.0.0", Integrity: "sha512-a"}}},
		{Key: "b", Origin: lockfile.OriginRoot, Source: "/s", Digest: d1},
		{Key: "c", Origin: lockfile.OriginRoot, Source: "/s", Digest: d1},
	})
	now := lockfile.New([]lockfile.Entry{
		{Key: "a", Origin: lockfile.OriginInstall, Source: "file:///r", Ref: "main", Commit: c2, Digest: d2, Pins: map[string]string{"s": d2, "t": d1},
			PublishedSkills: map[string]string{"s/skill://x/SKILL.md": d2, "s/skill://y/SKILL.md": "dynamic"},
			Packages:        map[string]lockfile.Package{"s": {Ecosystem: "npm", Name: "echo-mcp", Version: "1.1.0", Integrity: "sha512-b"}}},
		{Key: "b", Origin: lockfile.OriginRoot, Source: "/s", Digest: d1, Signer: "ops"},
		{Key: "d", Origin: lockfile.OriginRoot, Source: "/s", Digest: d2},
	})
	var got []string
	for _, d := range lockfile.Compare(locked, now) {
		got = append(got, d.String())
	}
	want := []string{
		"install a: digest is " + d1 + " in the lock, " + d2 + " now",
		"install a: commit is " + c1 + " in the lock, " + c2 + " now",
		"install a: pins[s] is " + d1 + " in the lock, " + d2 + " now",
		"install a: pins[t] is none in the lock, " + d1 + " now",
		"install a: packages[s] is echo-mcp@1.0.0 (sha512-a) in the lock, echo-mcp@1.1.0 (sha512-b) now",
		"install a: publishedSkills[s/skill://x/SKILL.md] is " + d1 + " in the lock, " + d2 + " now",
		"root b: signer is none in the lock, ops now",
		"root c: in the lock (" + d1 + ") but not enabled now",
		"root d: enabled now (" + d2 + ") but not in the lock",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Compare:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"schema":"https://skillgate.dev/schemas/lock.v1.json","skills":[{"key":"a","origin":"root","source":"/s","digest":"` + d1 + `"}]}`))
	f.Add([]byte(`{"schema":"https://skillgate.dev/schemas/lock.v1.json","skills":[]}`))
	f.Add([]byte(`{"schema":"https://skillgate.dev/schemas/lock.v1.json","skills":[{"key":"a","origin":"install","source":"/s","digest":"` + d1 + `","packages":{"mem":{"ecosystem":"npm","name":"@a/b","version":"1.0.0","integrity":"sha512-x"}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := lockfile.Parse(data)
		if err != nil {
			return
		}
		b, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := lockfile.Parse(b)
		if err != nil {
			t.Fatalf("a lock that parsed does not parse again: %v\n%s", err, b)
		}
		if d := lockfile.Compare(l, back); len(d) != 0 {
			t.Fatalf("round trip differs: %v", d)
		}
	})
}
