package skillsext_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/model/skillsext"
)

// TestEntryJSON checks how a host reads entries: an array or "dynamic",
// and every shape the extension makes invalid refused with its reason; and
// that an entry writes back as it was read.
func TestEntryJSON(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{in: `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":1}]}`},
		{in: `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`},
		{in: `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[]}`},
		{in: `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"}}`, err: `skill entry skill://a/SKILL.md: resources must be an array of files or "dynamic"`},
		{in: `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":"static"}`, err: `skill entry skill://a/SKILL.md: resources must be an array of files or "dynamic"`},
		{in: `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":null}`, err: `skill entry skill://a/SKILL.md: resources must be an array of files or "dynamic"`},
		{in: `{"uri":"skill://a/SKILL.md","frontmatter":"name: a","resources":[]}`, err: `skill entry skill://a/SKILL.md: frontmatter must be a JSON object`},
		{in: `{"frontmatter":{},"resources":[]}`, err: `skill entry: uri is missing`},
	} {
		var e skillsext.Entry
		err := json.Unmarshal([]byte(tc.in), &e)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if out, _ := json.Marshal(e); string(out) != tc.in {
			t.Errorf("round trip: %s, want %s", out, tc.in)
		}
	}
}

// TestVerify checks the host's checks of bytes against an entry.
func TestVerify(t *testing.T) {
	content := []byte("hello\n")
	e := skillsext.Entry{URI: "skill://a/SKILL.md", Resources: []skillsext.Resource{{URI: "skill://a/SKILL.md", Digest: skill.FileDigest(content), Size: 6}}}
	if err := e.VerifyRead("skill://a/SKILL.md", content); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		uri     string
		content string
		err     string
	}{
		{"skill://a/SKILL.md", "hello!", "skill verification failed: skill://a/SKILL.md has digest " + skill.FileDigest([]byte("hello!")) + ", the entry lists " + skill.FileDigest(content)},
		{"skill://a/SKILL.md", "hello", "skill verification failed: skill://a/SKILL.md is 5 bytes, the entry lists 6"},
		{"skill://a/extra.md", "hello\n", "skill verification failed: skill://a/extra.md is not listed in the entry of skill://a/SKILL.md"},
	} {
		err := e.VerifyRead(tc.uri, []byte(tc.content))
		if err == nil || err.Error() != tc.err || !errors.Is(err, skillsext.ErrVerify) {
			t.Errorf("VerifyRead(%s, %q) = %v, want %s", tc.uri, tc.content, err, tc.err)
		}
	}
	dyn := skillsext.Entry{URI: "skill://a/SKILL.md", Dynamic: true}
	if err := dyn.VerifyRead("skill://a/SKILL.md", content); err == nil || err.Error() != `skill verification failed: skill://a/SKILL.md lists no digests (resources: "dynamic")` {
		t.Errorf("dynamic: %v", err)
	}
}

// TestFrontmatterJSON checks the typing of frontmatter scalars as a YAML
// 1.2 parser types them.
func TestFrontmatterJSON(t *testing.T) {
	doc := "---\nname: a\ndescription: \"d: x\"\nversion: 1.0\ncount: 3\nquoted: \"3\"\non: yes\nflag: true\nnothing: ~\nwhen: 2026-01-02\nlist: [a, 1, false]\nmeta:\n  k: v\n  inf: .inf\nref: &r {x: 1}\nalias: *r\n---\nbody\n"
	got, err := skillsext.FrontmatterJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"a","description":"d: x","version":1,"count":3,"quoted":"3","on":"yes","flag":true,"nothing":null,"when":"2026-01-02","list":["a",1,false],"meta":{"k":"v","inf":".inf"},"ref":{"x":1},"alias":{"x":1}}`
	if string(got) != want {
		t.Errorf("FrontmatterJSON =\n%s\nwant\n%s", got, want)
	}
	if _, err := skillsext.FrontmatterJSON([]byte("---\n- a\n---\n")); err == nil || err.Error() != "frontmatter is not a YAML mapping" {
		t.Errorf("a list: %v", err)
	}
}

// TestVerifyFrontmatter checks the field-by-field comparison of a fetched
// SKILL.md with the entry's frontmatter.
func TestVerifyFrontmatter(t *testing.T) {
	md := []byte("---\nname: a\ndescription: d\nversion: 1.0\nmetadata:\n  k: [1, x]\n---\nbody\n")
	for _, tc := range []struct{ fm, err string }{
		{fm: `{"name":"a","description":"d","version":1,"metadata":{"k":[1.0,"x"]}}`},
		{fm: `{"description":"d","name":"a","metadata":{"k":[1,"x"]},"version":1.0}`},
		{fm: `{"name":"a","description":"d","version":"1.0","metadata":{"k":[1,"x"]}}`, err: `skill verification failed: skill://a/SKILL.md: frontmatter field "version" differs between the entry and SKILL.md`},
		{fm: `{"name":"a","description":"d","metadata":{"k":[1,"x"]}}`, err: `skill verification failed: skill://a/SKILL.md: SKILL.md has frontmatter field "version", the entry does not`},
		{fm: `{"name":"a","description":"d","version":1,"metadata":{"k":[1,"x"]},"allowed-tools":"Bash"}`, err: `skill verification failed: skill://a/SKILL.md: the entry has frontmatter field "allowed-tools", SKILL.md does not`},
		{fm: `{"name":"a","description":"d","version":1,"metadata":{"k":[1]}}`, err: `skill verification failed: skill://a/SKILL.md: frontmatter field "metadata" differs between the entry and SKILL.md`},
	} {
		e := skillsext.Entry{URI: "skill://a/SKILL.md", Frontmatter: json.RawMessage(tc.fm)}
		err := e.VerifyFrontmatter(md)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err || !errors.Is(err, skillsext.ErrVerify)) {
			t.Errorf("%s: %v, want %q", tc.fm, err, tc.err)
		}
	}
}
