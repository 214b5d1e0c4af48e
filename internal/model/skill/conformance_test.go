package skill_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
)

const allowed = "Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed."

// TestStrictParity pins every check of skills-ref's validate, one case
// each, with its exact message.
func TestStrictParity(t *testing.T) {
	long := strings.Repeat("a", 65)
	tests := []struct {
		name    string
		dir     string
		content string
		want    []string
	}{
		{"valid", "my-skill", "---\nname: my-skill\ndescription: Does things.\n---\nBody\n", nil},
		{"no frontmatter", "my-skill", "# Title\n", []string{"SKILL.md must start with YAML frontmatter (---)"}},
		{"not closed", "my-skill", "---\nname: my-skill\ndescription: x\n", []string{"SKILL.md frontmatter not properly closed with ---"}},
		{"not a mapping (list)", "my-skill", "---\n- a\n- b\n---\n", []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{"not a mapping (scalar)", "my-skill", "---\njust text\n---\n", []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{"empty frontmatter", "my-skill", "---\n---\n", []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{"unknown field", "my-skill", "---\nname: my-skill\ndescription: x\nunknown_field: y\n---\n", []string{"Unexpected fields in frontmatter: unknown_field. " + allowed}},
		{"unknown fields sorted", "my-skill", "---\nzeta: 1\nname: my-skill\nalpha: 2\ndescription: x\n---\n", []string{"Unexpected fields in frontmatter: alpha, zeta. " + allowed}},
		{"extension key at top level is unknown", "my-skill", "---\nname: my-skill\ndescription: x\ntier: 1\ncategory: tools\n---\n", []string{"Unexpected fields in frontmatter: category, tier. " + allowed}},
		{"missing name", "my-skill", "---\ndescription: x\n---\n", []string{"Missing required field in frontmatter: name"}},
		{"empty name", "my-skill", "---\nname:\ndescription: x\n---\n", []string{"Field 'name' must be a non-empty string"}},
		{"blank name", "my-skill", "---\nname: '   '\ndescription: x\n---\n", []string{"Field 'name' must be a non-empty string"}},
		{"name is a list", "my-skill", "---\nname:\n  - a\ndescription: x\n---\n", []string{"Field 'name' must be a non-empty string"}},
		{"name too long", long, "---\nname: " + long + "\ndescription: x\n---\n", []string{"Skill name '" + long + "' exceeds 64 character limit (65 chars)"}},
		{"uppercase", "MySkill", "---\nname: MySkill\ndescription: x\n---\n", []string{"Skill name 'MySkill' must be lowercase"}},
		{"cyrillic uppercase", "НАВЫК", "---\nname: НАВЫК\ndescription: x\n---\n", []string{"Skill name 'НАВЫК' must be lowercase"}},
		{"leading hyphen", "-skill", "---\nname: -skill\ndescription: x\n---\n", []string{"Skill name cannot start or end with a hyphen"}},
		{"trailing hyphen", "skill-", "---\nname: skill-\ndescription: x\n---\n", []string{"Skill name cannot start or end with a hyphen"}},
		{"consecutive hyphens", "my--skill", "---\nname: my--skill\ndescription: x\n---\n", []string{"Skill name cannot contain consecutive hyphens"}},
		{"underscore", "my_skill", "---\nname: my_skill\ndescription: x\n---\n", []string{"Skill name 'my_skill' contains invalid characters. Only letters, digits, and hyphens are allowed."}},
		{"dir mismatch", "other", "---\nname: my-skill\ndescription: x\n---\n", []string{"Directory name 'other' must match skill name 'my-skill'"}},
		{"chinese name", "技能", "---\nname: 技能\ndescription: x\n---\n", nil},
		{"russian name", "мой-навык", "---\nname: мой-навык\ndescription: x\n---\n", nil},
		{"nfkc", "caf\u00e9", "---\nname: cafe\u0301\ndescription: x\n---\n", nil},
		{"name stripped", "my-skill", "---\nname: '  my-skill '\ndescription: x\n---\n", nil},
		{"several name errors accumulate", "x", "---\nname: -Bad_\ndescription: x\n---\n", []string{
			"Skill name '-Bad_' must be lowercase",
			"Skill name cannot start or end with a hyphen",
			"Skill name '-Bad_' contains invalid characters. Only letters, digits, and hyphens are allowed.",
			"Directory name 'x' must match skill name '-Bad_'",
		}},
		{"missing description", "my-skill", "---\nname: my-skill\n---\n", []string{"Missing required field in frontmatter: description"}},
		{"empty description", "my-skill", "---\nname: my-skill\ndescription: ''\n---\n", []string{"Field 'description' must be a non-empty string"}},
		{"description too long", "my-skill", "---\nname: my-skill\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", []string{"Description exceeds 1024 character limit (1025 chars)"}},
		{"description measured unstripped", "my-skill", "---\nname: my-skill\ndescription: |\n  " + strings.Repeat("d", 1024) + "\n---\n", []string{"Description exceeds 1024 character limit (1025 chars)"}},
		{"description counted in code points", "my-skill", "---\nname: my-skill\ndescription: " + strings.Repeat("é", 1024) + "\n---\n", nil},
		{"compatibility not a string", "my-skill", "---\nname: my-skill\ndescription: x\ncompatibility:\n  a: b\n---\n", []string{"Field 'compatibility' must be a string"}},
		{"compatibility too long", "my-skill", "---\nname: my-skill\ndescription: x\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", []string{"Compatibility exceeds 500 character limit (501 chars)"}},
		{"empty compatibility passes", "my-skill", "---\nname: my-skill\ndescription: x\ncompatibility:\n---\n", nil},
		{"allowed-tools string", "my-skill", "---\nname: my-skill\ndescription: x\nallowed-tools: Bash(jq:*) Bash(git:*)\n---\n", nil},
		{"allowed-tools block list", "my-skill", "---\nname: my-skill\ndescription: x\nallowed-tools:\n  - Read\n  - Write\n---\n", nil},
		{"metadata string passes", "my-skill", "---\nname: my-skill\ndescription: x\nmetadata: just text\n---\n", nil},
		{"all errors accumulate in order", "my-skill", "---\nextra: 1\ncompatibility:\n  - a\n---\n", []string{
			"Unexpected fields in frontmatter: extra. " + allowed,
			"Missing required field in frontmatter: name",
			"Missing required field in frontmatter: description",
			"Field 'compatibility' must be a string",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := skill.Parse([]byte(tc.content), tc.dir, skill.Options{Mode: skill.Strict})
			if got := s.Errors(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestStrictYAMLRefusals pins what StrictYAML refuses and skills-ref reports
// as "Invalid YAML in frontmatter: …".
func TestStrictYAMLRefusals(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"flow sequence", "name: s\ndescription: x\nallowed-tools: [Read, Write]\n", "Invalid YAML in frontmatter: line 4, column 16: found disallowed flow-style collection (write a block list or mapping, or quote the value to make it text)"},
		{"flow mapping", "name: s\ndescription: x\nmetadata: {a: b}\n", "Invalid YAML in frontmatter: line 4, column 11: found disallowed flow-style collection (write a block list or mapping, or quote the value to make it text)"},
		{"anchor", "name: &n s\ndescription: x\n", "Invalid YAML in frontmatter: line 2, column 7: found disallowed anchor &n (quote the value to make it text)"},
		{"tag", "name: !!str s\ndescription: x\n", "Invalid YAML in frontmatter: line 2, column 7: found disallowed tag !!str (do not specify types in markup)"},
		{"duplicate key", "name: s\ndescription: x\nname: t\n", "Invalid YAML in frontmatter: line 4: duplicate key 'name' found; keep one of them"},
		{"inconsistent indentation", "name: s\ndescription: x\nmetadata:\n  a: b\nother:\n    c: d\n", "Invalid YAML in frontmatter: line 7, column 5: found mapping with indentation inconsistent with previous mapping"},
		{"unquoted colon value", "name: s\ndescription: Use when: things happen\n", "Invalid YAML in frontmatter: line 3: mapping values are not allowed in this context"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := skill.Parse([]byte("---\n"+tc.yaml+"---\n"), "s", skill.Options{Mode: skill.Strict})
			if got := s.Errors(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("errors\n got %q\nwant [%q]", got, tc.want)
			}
		})
	}
}

// TestRobustFrontmatter pins the delimiter, encoding and size rules that both
// modes share.
func TestRobustFrontmatter(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		mode     skill.Mode
		wantErrs []string
		wantDesc string
	}{
		{"dashes inside a value do not close", "---\nname: s\ndescription: a---b\n---\n", skill.Strict, nil, "a---b"},
		{"dashes at line start of a value do not close", "---\nname: s\ndescription: >\n  first\n  ---x\n---\n", skill.Strict, nil, "first ---x"},
		{"closing with dots", "---\nname: s\ndescription: x\n...\nbody\n", skill.Strict, nil, "x"},
		{"trailing spaces on delimiters", "--- \nname: s\ndescription: x\n---\t\n", skill.Strict, nil, "x"},
		{"CRLF", "---\r\nname: s\r\ndescription: x\r\n---\r\nbody\r\n", skill.Strict, nil, "x"},
		{"BOM stripped", "\ufeff---\nname: s\ndescription: x\n---\n", skill.Strict, nil, "x"},
		{"four dashes is not a delimiter", "----\nname: s\n---\n", skill.Strict, []string{"SKILL.md must start with YAML frontmatter (---)"}, ""},
		{"NUL byte", "---\nname: s\x00\ndescription: x\n---\n", skill.Lenient, []string{"SKILL.md contains a NUL byte at offset 11; save it as plain UTF-8 text"}, ""},
		{"invalid UTF-8", "---\nname: s\ndescription: \xff\n---\n", skill.Lenient, []string{"SKILL.md is not valid UTF-8 (first bad byte at offset 25); save it as UTF-8"}, ""},
		{"frontmatter too large", "---\nname: s\ndescription: x\nlicense: " + strings.Repeat("l", 70000) + "\n---\n", skill.Lenient, []string{"frontmatter is 70033 bytes, over the 65536-byte limit; keep the header short and move detail into the body"}, ""},
		{"duplicate keys rejected leniently too", "---\nname: s\ndescription: x\ndescription: y\n---\n", skill.Lenient, []string{"Invalid YAML in frontmatter: line 4: duplicate key 'description' found; keep one of them"}, ""},
		{"colon retry (lenient)", "---\nname: s\ndescription: Use when: things happen\n---\n", skill.Lenient, nil, "Use when: things happen"},
		{"flow list accepted leniently", "---\nname: s\ndescription: x\ninvokable_by: [T0, T1]\n---\n", skill.Lenient, nil, "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := skill.Parse([]byte(tc.content), "s", skill.Options{Mode: tc.mode})
			if got := s.Errors(); !reflect.DeepEqual(got, tc.wantErrs) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.wantErrs)
			}
			if s.Description != tc.wantDesc {
				t.Errorf("description = %q, want %q", s.Description, tc.wantDesc)
			}
		})
	}
}

// TestAliasBomb checks that a "billion laughs" frontmatter fails fast in
// both modes.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: s\ndescription: x\na0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("---\n")
	for _, mode := range []skill.Mode{skill.Lenient, skill.Strict} {
		start := time.Now()
		s := skill.Parse([]byte(b.String()), "s", skill.Options{Mode: mode})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%v: took %v", mode, d)
		}
		errs := s.Errors()
		if len(errs) != 1 || !strings.HasPrefix(errs[0], "Invalid YAML in frontmatter: ") {
			t.Fatalf("%v: errors %q", mode, errs)
		}
		if mode == skill.Lenient && !strings.Contains(errs[0], "excessive aliasing") {
			t.Errorf("lenient: %q does not mention excessive aliasing", errs[0])
		}
	}
}

// TestLenient pins the client guide's rules.
func TestLenient(t *testing.T) {
	tests := []struct {
		name      string
		dir       string
		content   string
		wantErrs  []string
		wantWarns []string
	}{
		{"name differs from dir: warn, load", "other", "---\nname: s\ndescription: x\n---\n", nil,
			[]string{"Directory name 'other' must match skill name 's'"}},
		{"long name: warn, load", strings.Repeat("n", 70), "---\nname: " + strings.Repeat("n", 70) + "\ndescription: x\n---\n", nil,
			[]string{"Skill name '" + strings.Repeat("n", 70) + "' exceeds 64 character limit (70 chars)"}},
		{"missing description: skip", "s", "---\nname: s\n---\n", []string{"Missing required field in frontmatter: description"}, nil},
		{"blank description: skip", "s", "---\nname: s\ndescription: ' '\n---\n", []string{"Field 'description' must be a non-empty string"}, nil},
		{"unparseable YAML: skip", "s", "---\nname: s\ndescription: x\n  bad: [\n---\n", []string{"Invalid YAML in frontmatter: line 4: mapping values are not allowed in this context"}, nil},
		{"unknown key kept with a warning", "s", "---\nname: s\ndescription: x\nauthor: me\n---\n", nil,
			[]string{"unknown frontmatter field 'author' was kept; move it under metadata: to follow the specification"}},
		{"Claude Code keys: no warning", "s", "---\nname: s\ndescription: x\nargument-hint: '[file]'\ndisable-model-invocation: true\nuser-invocable: false\nwhen_to_use: always\nmodel: opus\ncontext: fork\nallowed-tools:\n  - Read\n---\n", nil, nil},
		{"unsafe name rejected", "s", "---\nname: a/b\ndescription: x\n---\n", []string{"Skill name 'a/b' cannot be used as an identifier: it contains '/', '\\', whitespace or control characters, or is '.' or '..'; rename it with letters, digits and hyphens"},
			[]string{"Skill name 'a/b' contains invalid characters. Only letters, digits, and hyphens are allowed.", "Directory name 's' must match skill name 'a/b'"}},
		{"long description: warn", "s", "---\nname: s\ndescription: " + strings.Repeat("d", 1100) + "\n---\n", nil,
			[]string{"Description exceeds 1024 character limit (1100 chars); catalogs may shorten it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := skill.Parse([]byte(tc.content), tc.dir, skill.Options{})
			if got := s.Errors(); !reflect.DeepEqual(got, tc.wantErrs) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.wantErrs)
			}
			if got := s.Warnings(); !reflect.DeepEqual(got, tc.wantWarns) {
				t.Errorf("warnings\n got %q\nwant %q", got, tc.wantWarns)
			}
		})
	}
}

// TestExtensions pins tier, invokable_by, category and version, at the top
// level and under metadata.
func TestExtensions(t *testing.T) {
	all := []skill.AgentTier{"T0", "T1", "T2", "T3", "T4"}
	tests := []struct {
		name     string
		fm       string
		tier     int
		inv      []skill.AgentTier
		category string
		version  string
		wantErrs []string
	}{
		{"defaults", "", 2, all[:4], "", "", nil},
		{"tier 1", "tier: 1\n", 1, all, "", "", nil},
		{"tier 3", "tier: 3\n", 3, all[:2], "", "", nil},
		{"tier under metadata", "metadata:\n  tier: \"1\"\n", 1, all, "", "", nil},
		{"explicit list narrows", "tier: 1\ninvokable_by: [T4, t0, T4]\n", 1, []skill.AgentTier{"T0", "T4"}, "", "", nil},
		{"list under metadata", "metadata:\n  tier: '2'\n  invokable_by: T1, T2\n", 2, []skill.AgentTier{"T1", "T2"}, "", "", nil},
		{"list wider than tier", "tier: 3\ninvokable_by:\n  - T0\n  - T2\n", 3, all[:2], "", "", []string{"Field 'invokable_by' lists T2, but tier 3 allows only T0–T1; remove T2 or lower the tier"}},
		{"bad tier", "tier: 7\n", 2, all[:4], "", "", []string{"Field 'tier' must be 1, 2 or 3 (got \"7\"); tier 1 is for any agent, 2 for T3 and above, 3 for T0/T1 only"}},
		{"bad agent tier", "invokable_by: [T9]\n", 2, all[:4], "", "", []string{"Field 'invokable_by': unknown agent tier \"T9\": use one of T0, T1, T2, T3, T4"}},
		{"conflict", "tier: 1\nmetadata:\n  tier: '3'\n", 1, all, "", "", []string{"'tier' is set both at the top level and under metadata, with different values; keep one"}},
		{"category and version", "category: escrituras\nversion: 1.2.3\n", 2, all[:4], "escrituras", "1.2.3", nil},
		{"category under metadata", "metadata:\n  category: legal/es\n  version: \"1.0\"\n", 2, all[:4], "legal/es", "1.0", nil},
		{"bad category", "category: ../etc\n", 2, all[:4], "dir-cat", "", []string{"Field 'category' must be lowercase words separated by '/' (got \"../etc\")"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := skill.Parse([]byte("---\nname: s\ndescription: x\n"+tc.fm+"---\n"), "s", skill.Options{Category: "dir-cat"})
			if got := s.Errors(); !reflect.DeepEqual(got, tc.wantErrs) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.wantErrs)
			}
			if s.Tier != tc.tier || !reflect.DeepEqual(s.InvokableBy, tc.inv) {
				t.Errorf("tier %d %v, want %d %v", s.Tier, s.InvokableBy, tc.tier, tc.inv)
			}
			wantCat := tc.category
			if wantCat == "" {
				wantCat = "dir-cat"
			}
			if s.Category != wantCat || s.Version != tc.version {
				t.Errorf("category %q version %q, want %q %q", s.Category, s.Version, wantCat, tc.version)
			}
			// In strict mode the same findings never change the verdict.
			st := skill.Parse([]byte("---\nname: s\ndescription: x\nmetadata:\n  tier: '9'\n---\n"), "s", skill.Options{Mode: skill.Strict})
			if !st.Valid() {
				t.Errorf("strict: extension finding changed the verdict: %q", st.Errors())
			}
		})
	}
}

// TestLoad covers the directory-level checks and the lowercase file name.
func TestLoad(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("lower/skill.md", "---\nname: lower\ndescription: x\n---\n")
	mk("empty/README.md", "x")
	mk("file.txt", "x")
	if err := os.MkdirAll(filepath.Join(root, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	mk("real/SKILL.md", "---\nname: linked\ndescription: x\n---\n")
	if err := os.Symlink(filepath.Join(root, "real", "SKILL.md"), filepath.Join(root, "linked", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		want []string
	}{
		{filepath.Join(root, "lower"), nil},
		{filepath.Join(root, "missing"), []string{"Path does not exist: " + filepath.Join(root, "missing")}},
		{filepath.Join(root, "file.txt"), []string{"Not a directory: " + filepath.Join(root, "file.txt")}},
		{filepath.Join(root, "empty"), []string{"Missing required file: SKILL.md"}},
		{filepath.Join(root, "linked"), []string{"Missing required file: SKILL.md"}},
	}
	for _, tc := range tests {
		s, err := skill.Load(context.Background(), tc.dir, skill.Options{Mode: skill.Strict})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Errors(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: errors %q, want %q", tc.dir, got, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := skill.Load(ctx, root, skill.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: err = %v", err)
	}
}
