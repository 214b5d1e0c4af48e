package skillsext

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// Bounds on the frontmatter rendered as JSON (the scan already bounded
// the file; these keep aliases from multiplying it).
const (
	maxFrontmatterNodes = 10000
	maxFrontmatterDepth = 32
)

// FrontmatterJSON renders the frontmatter of a SKILL.md as the extension's
// entry carries it: the YAML mapping as a JSON object, keys in document
// order, scalars typed as YAML 1.2's core schema types them (what a
// client's YAML parser makes of the file, which it compares with the
// entry): strings, numbers, booleans and null; timestamps stay strings.
// A value JSON cannot hold (.inf, .nan) is kept as the string written.
func FrontmatterJSON(content []byte) (json.RawMessage, error) {
	text, err := skill.FrontmatterText(content)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("frontmatter is not a YAML mapping")
	}
	c := converter{}
	b, err := c.append(nil, doc.Content[0], 0)
	if err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	return b, nil
}

type converter struct{ nodes int }

func (c *converter) append(b []byte, n *yaml.Node, depth int) ([]byte, error) {
	c.nodes++
	if c.nodes > maxFrontmatterNodes || depth > maxFrontmatterDepth {
		return nil, errors.New("too many values or nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.append(b, n.Alias, depth+1)
	case yaml.MappingNode:
		b = append(b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key is not a scalar", k.Line)
			}
			if i > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(k.Value)
			b = append(b, kb...)
			b = append(b, ':')
			var err error
			if b, err = c.append(b, n.Content[i+1], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, e := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = c.append(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case yaml.ScalarNode:
		return appendScalar(b, n), nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// appendScalar writes a scalar by its resolved tag.
func appendScalar(b []byte, n *yaml.Node) []byte {
	switch n.ShortTag() {
	case "!!null":
		return append(b, "null"...)
	case "!!bool":
		var v bool
		if n.Decode(&v) == nil {
			return strconv.AppendBool(b, v)
		}
	case "!!int":
		var v int64
		if n.Decode(&v) == nil {
			return strconv.AppendInt(b, v, 10)
		}
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return strconv.AppendFloat(b, f, 'g', -1, 64)
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			j, _ := json.Marshal(f)
			return append(b, j...)
		}
	}
	s, _ := json.Marshal(n.Value)
	return append(b, s...)
}
