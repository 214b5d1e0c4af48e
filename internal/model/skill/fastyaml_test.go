package skill

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkFastYAML compares the fast path with the YAML library on text: when
// the fast path accepts text, the library must accept it too, in both
// modes, with exactly the same result. It reports whether the fast path
// accepted it.
func checkFastYAML(t testing.TB, name, text string) bool {
	t.Helper()
	fast, ok := fastYAML(text)
	if !ok {
		return false
	}
	for _, strict := range []bool{false, true} {
		slow, err := decodeYAML(text, 2, strict)
		if err != nil {
			t.Fatalf("%s: fast path accepted what the library refuses (strict %v): %v\n%q", name, strict, err, text)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: fast path differs from the library (strict %v)\nfast: %#v\nslow: %#v\n%q", name, strict, fast, slow, text)
		}
	}
	if got, err := fast.MarshalJSON(); err != nil || !bytes.Equal(got, refMapJSON(fast)) {
		t.Fatalf("%s: MarshalJSON = %s, %v; want %s", name, got, err, refMapJSON(fast))
	}
	return true
}

func TestFastYAMLCases(t *testing.T) {
	for _, c := range []struct {
		text string
		fast bool // whether the fast path should take it
	}{
		{"name: a\ndescription: b\n", true},
		{"name: a\ndescription: \"quoted: yes # no comment\"\n", true},
		{"name: a\ndescription: 'it''s'\n", true},
		{"name: a\ndescription: >-\n  one\n  two\n", true},
		{"name: a\ndescription: >\n  one\n  two\nlicense: MIT\n", true},
		{"name: a\ndescription: |\n    one\n    two\n", true},
		{"name: a\ndescription: |-\n  one\n  two\n", true},
		{"name: a\nmetadata:\n  author: x\n  version: \"1.0\"\n", true},
		{"name: a\nmetadata:\n  tier: '1'\n  invokable_by:\n  - T0\n  - T1\n", true},
		{"name: a\nallowed-tools:\n  - Read\n  - 'Bash(git:*)'\n", true},
		{"name: a\nallowed-tools:\n- Read\n- Write\nlicense: x\n", true},
		{"name: a\nempty:\nlicense: x\n", true},
		{"name: a\nempty:   \n", true},
		{"name: C# and C++ [beta] {x}, 50%\n", true},
		{"name: ünïcødé — ok\n", true},
		{"a:\n  b:\n    c: d\n  e: f\n", true},
		{"name: a\ndescription: x\n", true},
		{"url: http://example.com/a:b\n", true},

		{"", false},
		{"name: a", false},                             // no final newline
		{"name: a\n\ndescription: b\n", false},         // blank line
		{"# comment\nname: a\n", false},                // comment
		{"name: a # comment\n", false},                 // trailing comment
		{"name: a\ndescription: Use when: x\n", false}, // ": " in a plain value
		{"name: a\ndescription: ends:\n", false},       // final ':'
		{"name: a\nname: b\n", false},                  // duplicate key
		{"name: a\n  b\n", false},                      // continuation line
		{"name: \"a\\tb\"\n", false},                   // escape
		{"name: \"a\n  b\"\n", false},                  // multi-line quoted
		{"name: &x a\n", false},                        // anchor
		{"name: *x\n", false},                          // alias
		{"name: !!str a\n", false},                     // tag
		{"name: [a, b]\n", false},                      // flow sequence
		{"name: {a: b}\n", false},                      // flow mapping
		{"name:\ta\n", false},                          // tab
		{"d: >+\n  a\n", false},                        // keep chomping
		{"d: >2\n   a\n", false},                       // indentation indicator
		{"d: >\n  a\n    b\n", false},                  // more-indented line
		{"d: >\n  a \n", false},                        // trailing space in a block scalar
		{"d: >\nx: y\n", false},                        // empty block scalar
		{"a:\n  b: c\nd:\n    e: f\n", false},          // inconsistent mapping indentation
		{"- a\n- b\n", false},                          // not a mapping
		{"a: b\n- c\n", false},                         // stray sequence entry
		{"a:\n  - b\n  c: d\n", false},                 // mapping after a sequence
		{"a:\n  - b: c\n", false},                      // mapping in a sequence
		{"a:\n  - >\n    b\n", false},                  // block scalar in a sequence
		{"? a\n: b\n", false},                          // complex key
		{"\"a\": b\n", false},                          // quoted key
		{"a b: c\n", false},                            // key with a space
		{"-a: b\n", false},                             // key starting with '-'
		{"a: b\u2028c\n", false},                       // Unicode line separator
		{"a: b\u0085c\n", false},                       // next line
		{"a: b\x01\n", false},                          // control character
		{"a: \ufeffb\n", false},                        // byte-order mark
		{"%YAML 1.1\n---\na: b\n", false},              // directive
		{"a: b\n  \n", false},                          // whitespace-only line
		{"a:b\n", false},                               // no space after ':'
		{strings.Repeat("k", 300) + ": v\n", false},    // very long key
	} {
		got := checkFastYAML(t, c.text, c.text)
		if got != c.fast {
			t.Errorf("fastYAML(%q) ok = %v, want %v", c.text, got, c.fast)
		}
	}
}

// TestFastYAMLCorpus compares the fast path with the YAML library on the
// frontmatter of every skill of the public corpus ($SKILLGATE_CORPUS, else
// ../shared/corpus beside the checkout) and, when set, of the benchmark tree
// ($SKILLGATE_BENCH_TREE, made by bench/gen). It skips when neither exists.
func TestFastYAMLCorpus(t *testing.T) {
	var dirs []string
	corpus := os.Getenv("SKILLGATE_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "..", "..", "shared", "corpus")
	}
	if fi, err := os.Stat(corpus); err == nil && fi.IsDir() {
		dirs = append(dirs, corpus)
	}
	if tree := os.Getenv("SKILLGATE_BENCH_TREE"); tree != "" {
		dirs = append(dirs, tree)
	}
	if len(dirs) == 0 {
		t.Skip("no skill corpus (set SKILLGATE_CORPUS or SKILLGATE_BENCH_TREE)")
	}
	for _, dir := range dirs {
		var files, docs, fast int
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.EqualFold(d.Name(), "SKILL.md") {
				return nil
			}
			files++
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			doc, err := splitDocument(b, false)
			if err != nil {
				return nil
			}
			docs++
			if checkFastYAML(t, p, doc.yaml) {
				fast++
			}
			// The lenient repair re-parses a rewritten text: check it too.
			if fixed, lines := quoteColonValues(doc.yaml); len(lines) > 0 {
				checkFastYAML(t, p+" (repaired)", fixed)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if docs == 0 {
			t.Fatalf("%s: no frontmatter found in %d files", dir, files)
		}
		t.Logf("%s: %d SKILL.md, %d with frontmatter, %d (%.1f%%) on the fast path", dir, files, docs, fast, 100*float64(fast)/float64(docs))
	}
}

// FuzzFastYAML checks on arbitrary text that whenever the fast path
// accepts a frontmatter, the YAML library accepts it too, in both modes,
// and returns the same mapping.
func FuzzFastYAML(f *testing.F) {
	for _, s := range []string{
		"name: a\ndescription: b\n",
		"name: a\ndescription: >-\n  one\n  two\nmetadata:\n  author: x\n  version: \"1.2.3\"\n",
		"name: a\ndescription: 'it''s: ok'\nallowed-tools:\n- Read\n- Write\n",
		"a:\n  b:\n    c: d\n  e: |\n    x\n    y\n",
		"name: a\ndescription: x # y\n",
		"a: b\n  c\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkFastYAML(t, "fuzz", text)
	})
}

// refMapJSON is how Map.MarshalJSON used to write a mapping: every key and
// value through encoding/json.
func refMapJSON(m *Map) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, _ := json.Marshal(m.Values[k])
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// FuzzMapJSON checks that Map.MarshalJSON writes what encoding/json writes
// for any keys and values, and that json.Marshal of a Map is the same.
func FuzzMapJSON(f *testing.F) {
	f.Add("name", "plain", "list item", "nested")
	f.Add("a<b>&", "é \u2028 \"q\" \\ \x01 \x7f", "\xff bad utf-8", "")
	f.Fuzz(func(t *testing.T, k, v, item, nested string) {
		inner := &Map{Keys: []string{nested}, Values: map[string]any{nested: v}}
		m := &Map{Keys: []string{k}, Values: map[string]any{k: v}}
		for _, extra := range []struct {
			k string
			v any
		}{{k + "1", []any{item, v, inner}}, {k + "2", inner}, {k + "3", nil}, {k + "4", []any{}}} {
			if _, dup := m.Values[extra.k]; !dup {
				m.Keys = append(m.Keys, extra.k)
				m.Values[extra.k] = extra.v
			}
		}
		got, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := refMapJSON(m); !bytes.Equal(got, want) {
			t.Fatalf("MarshalJSON\n%s\nwant\n%s", got, want)
		}
		viaJSON, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(viaJSON, got) {
			t.Fatalf("json.Marshal\n%s\nMarshalJSON\n%s", viaJSON, got)
		}
	})
}
