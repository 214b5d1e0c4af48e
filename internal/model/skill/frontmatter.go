package skill

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// Size limits applied before any parsing.
const (
	// MaxFileBytes bounds SKILL.md. The largest public SKILL.md we know of is
	// under 300 KiB; the specification recommends under 500 lines.
	MaxFileBytes = 4 << 20
	// MaxFrontmatterBytes bounds the YAML header.
	MaxFrontmatterBytes = 64 << 10
	// maxYAMLNodes bounds the number of values a frontmatter may expand to,
	// counting every alias expansion, so a "billion laughs" file fails fast.
	maxYAMLNodes = 10000
	// maxYAMLDepth bounds nesting.
	maxYAMLDepth = 32
)

// Map is a YAML mapping that keeps its keys in document order. Values are
// string, []any or *Map: like the reference validator's StrictYAML, every
// scalar is kept as the string that was written.
type Map struct {
	Keys   []string
	Values map[string]any
}

// Get returns the value of key and whether it is present.
func (m *Map) Get(key string) (any, bool) {
	if m == nil {
		return nil, false
	}
	v, ok := m.Values[key]
	return v, ok
}

// Has reports whether key is present.
func (m *Map) Has(key string) bool {
	_, ok := m.Get(key)
	return ok
}

// MarshalJSON writes the mapping as a JSON object in document order, as
// encoding/json writes its keys and values.
func (m *Map) MarshalJSON() ([]byte, error) {
	return m.appendJSON(make([]byte, 0, 256))
}

func (m *Map) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i, k := range m.Keys {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONValue(b, k); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendJSONValue(b, m.Values[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendJSONValue appends v as encoding/json would write it; the shapes a
// frontmatter holds (strings, lists, mappings) are written directly.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case string:
		if jsonscan.Plain(t) {
			b = append(b, '"')
			b = append(b, t...)
			return append(b, '"'), nil
		}
	case *Map:
		if t != nil {
			return t.appendJSON(b)
		}
	case []any:
		if t != nil {
			b = append(b, '[')
			for i, e := range t {
				if i > 0 {
					b = append(b, ',')
				}
				var err error
				if b, err = appendJSONValue(b, e); err != nil {
					return nil, err
				}
			}
			return append(b, ']'), nil
		}
	}
	j, err := jsonMarshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// FrontmatterText returns the YAML text of content's frontmatter as
// [Parse] finds it (newlines normalised), for readers that need its values
// typed as YAML types them (the MCP Skills extension's entries, which a
// client compares with what its own YAML parser makes of SKILL.md) rather
// than kept as written, as Parse keeps them. Errors are Parse's for a file
// without a readable frontmatter.
func FrontmatterText(content []byte) (string, error) {
	d, err := splitDocument(content, false)
	if err != nil {
		return "", err
	}
	return d.yaml, nil
}

// document is a SKILL.md split into its parts.
type document struct {
	yaml     string // the frontmatter text, newlines normalised
	body     string // everything after the closing line, trimmed
	yamlLine int    // 1-based file line of the first frontmatter line
	bomFound bool
}

// splitDocument finds the frontmatter. Unlike the reference validator, which
// splits on the first "---" anywhere in the file, the delimiters must be whole
// lines, so a "---" inside a value does not end the frontmatter early. The
// body is left empty unless withBody; the YAML text never shares memory with
// content or the body.
func splitDocument(content []byte, withBody bool) (document, error) {
	var d document
	if len(content) > MaxFileBytes {
		return d, FileTooLarge("SKILL.md", int64(len(content)))
	}
	if bytes.HasPrefix(content, []byte("\xef\xbb\xbf")) {
		content = content[3:]
		d.bomFound = true
	}
	if i := bytes.IndexByte(content, 0); i >= 0 {
		return d, errorOf(ErrEncoding, "SKILL.md contains a NUL byte at offset %d; save it as plain UTF-8 text", i)
	}
	if !utf8.Valid(content) {
		off := 0
		for off < len(content) {
			r, n := utf8.DecodeRune(content[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return d, errorOf(ErrEncoding, "SKILL.md is not valid UTF-8 (first bad byte at offset %d); save it as UTF-8", off)
	}
	if bytes.IndexByte(content, '\r') >= 0 {
		text := string(content)
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
		content = []byte(text)
	}
	first, rest, _ := bytes.Cut(content, []byte("\n"))
	if string(bytes.TrimRight(first, " \t")) != "---" {
		return d, ErrNoFrontmatter
	}
	off := 0
	for off <= len(rest) {
		line := rest[off:]
		next := len(rest) + 1
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			next = off + i + 1
		}
		if t := bytes.TrimRight(line, " \t"); string(t) == "---" || string(t) == "..." {
			d.yaml = string(rest[:off])
			if withBody && next <= len(rest) {
				d.body = string(bytes.TrimSpace(rest[next:]))
			}
			d.yamlLine = 2
			if len(d.yaml) > MaxFrontmatterBytes {
				return d, errorOf(ErrTooLarge, "frontmatter is %d bytes, over the %d-byte limit; keep the header short and move detail into the body", len(d.yaml), MaxFrontmatterBytes)
			}
			return d, nil
		}
		off = next
	}
	return d, ErrUnclosedFrontmatter
}

// yamlLineRE matches the line reference in go-yaml's error messages.
var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// parseYAML parses frontmatter text into a *Map. In strict mode it refuses
// what StrictYAML refuses: flow collections, anchors, aliases, explicit tags,
// duplicate keys and sibling mappings with inconsistent indentation.
func parseYAML(text string, firstLine int, strict bool) (*Map, error) {
	if m, ok := fastYAML(text); ok {
		return m, nil
	}
	return decodeYAML(text, firstLine, strict)
}

// decodeYAML is parseYAML through the YAML library, for any frontmatter.
func decodeYAML(text string, firstLine int, strict bool) (*Map, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		msg := err.Error()
		if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			msg = fmt.Sprintf("line %d: %s", n+firstLine-1, msg[len(m[0]):])
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return nil, fmt.Errorf("%w: %s", ErrInvalidYAML, msg)
	}
	var top *yaml.Node
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		top = root.Content[0]
	}
	if strict && top != nil {
		if err := strictCheck(top, firstLine); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidYAML, err)
		}
	}
	if top == nil || top.Kind != yaml.MappingNode {
		if top != nil && top.Kind == yaml.AliasNode && !strict {
			top = top.Alias
		}
		if top == nil || top.Kind != yaml.MappingNode {
			return nil, ErrNotMapping
		}
	}
	c := converter{firstLine: firstLine}
	v, err := c.convert(top, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidYAML, err)
	}
	return v.(*Map), nil
}

// strictCheck walks the tree in document order and reports the first
// construct StrictYAML refuses.
func strictCheck(n *yaml.Node, firstLine int) error {
	at := func(n *yaml.Node) string {
		return fmt.Sprintf("line %d, column %d", n.Line+firstLine-1, n.Column)
	}
	if n.Anchor != "" {
		return fmt.Errorf("%s: found disallowed anchor &%s (quote the value to make it text)", at(n), n.Anchor)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return fmt.Errorf("%s: found disallowed alias *%s (quote the value to make it text)", at(n), n.Value)
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 {
			return fmt.Errorf("%s: found disallowed flow-style collection (write a block list or mapping, or quote the value to make it text)", at(n))
		}
	}
	if n.Style&yaml.TaggedStyle != 0 {
		return fmt.Errorf("%s: found disallowed tag %s (do not specify types in markup)", at(n), n.Tag)
	}
	mapCol := -1
	for i, c := range n.Content {
		if err := strictCheck(c, firstLine); err != nil {
			return err
		}
		if n.Kind == yaml.MappingNode && i%2 == 1 && c.Kind == yaml.MappingNode {
			if mapCol >= 0 && c.Column != mapCol {
				return fmt.Errorf("%s: found mapping with indentation inconsistent with previous mapping", at(c))
			}
			mapCol = c.Column
		}
	}
	return nil
}

// converter turns yaml.Nodes into Map/[]any/string values within a budget.
type converter struct {
	firstLine int
	nodes     int
}

func (c *converter) convert(n *yaml.Node, depth int) (any, error) {
	c.nodes++
	if c.nodes > maxYAMLNodes {
		return nil, fmt.Errorf("frontmatter expands to more than %d values (excessive aliasing); remove the anchors and aliases", maxYAMLNodes)
	}
	if depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: frontmatter nests deeper than %d levels", n.Line+c.firstLine-1, maxYAMLDepth)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias *%s", n.Line+c.firstLine-1, n.Value)
		}
		return c.convert(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.convert(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		m := &Map{Values: make(map[string]any, len(n.Content)/2)}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key must be plain text", k.Line+c.firstLine-1)
			}
			if _, dup := m.Values[k.Value]; dup {
				return nil, fmt.Errorf("line %d: duplicate key '%s' found; keep one of them", k.Line+c.firstLine-1, k.Value)
			}
			v, err := c.convert(vn, depth+1)
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, k.Value)
			m.Values[k.Value] = v
		}
		return m, nil
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return "", nil
		}
		return c.convert(n.Content[0], depth)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line+c.firstLine-1)
}

// colonValueRE matches a top-level "key: value" line whose value is plain
// (unquoted, not a block or flow introducer).
var colonValueRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_.-]+):[ \t]+([^'"|>\[{&*!#%@` + "`" + ` \t].*)$`)
})

// quoteColonValues applies the client guide's repair for the most common
// invalid frontmatter: an unquoted value that contains ": ". It returns the
// repaired text and the 0-based lines it changed.
func quoteColonValues(text string) (string, []int) {
	lines := strings.Split(text, "\n")
	var changed []int
	for i, l := range lines {
		m := colonValueRE().FindStringSubmatch(l)
		if m == nil || !strings.Contains(m[2], ": ") {
			continue
		}
		v := strings.TrimRight(m[2], " \t")
		lines[i] = m[1] + ": " + strconv.Quote(v)
		changed = append(changed, i)
	}
	return strings.Join(lines, "\n"), changed
}
