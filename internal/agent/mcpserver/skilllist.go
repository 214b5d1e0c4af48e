package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// skill_list is the tool every agent pages through, so it is served by a
// plain handler rather than mcp.AddTool's typed one: the typed handler
// marshals the structured result, unmarshals it again and validates it
// against the output schema (about 0.8 ms and 1.7 MB of garbage for a page
// of 100, the bulk of a page's cost). The plain handler decodes and checks
// its arguments exactly as the typed one does (the same schema, the same
// errors) and marshals the result once; the tool advertises the same input
// and output schemas. TestSkillListPlainMatchesTyped compares the two.

// skillListSchemas are skill_list's input and output schemas, inferred as
// mcp.AddTool infers them, and the input schema resolved for validation.
var skillListSchemas = func() (s struct {
	in, out *jsonschema.Schema
	inRes   *jsonschema.Resolved
}) {
	var err error
	if s.in, err = jsonschema.ForType(reflect.TypeFor[skillListIn](), &jsonschema.ForOptions{}); err == nil {
		if s.out, err = jsonschema.ForType(reflect.TypeFor[skillListOut](), &jsonschema.ForOptions{}); err == nil {
			portable(s.out)
			s.inRes, err = s.in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		}
	}
	if err != nil {
		panic(fmt.Sprintf("gateway: skill_list schemas: %v", err)) // programmer error
	}
	return s
}()

// portable rewrites an inferred output schema so that every node has a
// single type: jsonschema-go infers a Go slice as ["null","array"], which
// clients mapping tool schemas onto a single-type dialect (the MCP
// Inspector's --strict warns of it) may reject. skillgate never emits null
// for a list (CatalogItems makes empty lists []), so "array" is exact.
func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && (s.Types[0] == "null") != (s.Types[1] == "null") {
		s.Type = s.Types[0]
		if s.Type == "null" {
			s.Type = s.Types[1]
		}
		s.Types = nil
	}
	portable(s.Items)
	for _, p := range s.Properties {
		portable(p)
	}
	for _, d := range s.Defs {
		portable(d)
	}
}

// skillListTool is skill_list's definition. Its schemas are shared by
// every connection.
func skillListTool() *mcp.Tool {
	return &mcp.Tool{
		Name: ToolSkillList,
		Description: "List the skills you may load, a page at a time, by category/name: the total that match, one line per skill " +
			"(category/name: description), and next_cursor to pass as cursor for the next page (empty on the last). " +
			"Filters: query (what you need, in your own words: the skills are ranked by relevance to it over name, category and description, an exact name first, each with its score), category, tier (1-3). limit is 1-1000 (default 100). " +
			"The structured result holds each skill's {name, description, tier, invokable_by, source, category, version, trust}; " +
			"trust is first_party for a skill its operators ship and vouch for, imported for third-party code.",
		InputSchema:  skillListSchemas.in,
		OutputSchema: skillListSchemas.out,
		Annotations:  readOnly("List skills"),
	}
}

// decodeSkillListIn decodes skill_list's arguments as mcp.AddTool's typed
// handler does, with the same JSON decoder (segmentio's, matching field
// names exactly), so that a refusal reads the same: as an object (none is
// {}), validated against the input schema (unknown properties and wrong
// types refused), then into the struct. The error is the tool error the
// typed handler returns.
func decodeSkillListIn(args json.RawMessage) (skillListIn, error) {
	var in skillListIn
	v := map[string]any{}
	if len(args) > 0 {
		if err := sdkUnmarshal(args, &v); err != nil {
			return in, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	var val any = v
	if err := skillListSchemas.inRes.ApplyDefaults(&val); err != nil {
		return in, fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := skillListSchemas.inRes.Validate(&val); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %w", err)
	}
	if len(v) == 0 {
		return in, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return in, fmt.Errorf("validating \"arguments\": marshalling with defaults: %v", err)
	}
	if err := sdkUnmarshal(b, &in); err != nil {
		return skillListIn{}, err
	}
	return in, nil
}

// sdkUnmarshal decodes as the go-sdk's internal JSON package does (its
// Decoder, which matches field names exactly), without the decoder's 32 KB
// read buffer: b is one JSON value (arguments arrive parsed).
func sdkUnmarshal(b []byte, v any) error {
	_, err := segjson.Parse(b, v, segjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// skillListPlain is skill_list's handler (see skillListTool).
func (c *Conn) skillListPlain(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in, err := decodeSkillListIn(req.Params.Arguments)
	if err != nil {
		var res mcp.CallToolResult
		res.SetError(err)
		return &res, nil
	}
	res, out, err := c.skillList(ctx, req, in)
	if err != nil {
		var res mcp.CallToolResult
		res.SetError(err)
		return &res, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("marshaling output: %w", err)
	}
	res.StructuredContent = json.RawMessage(b)
	return res, nil
}

func (c *Conn) skillList(ctx context.Context, _ *mcp.CallToolRequest, in skillListIn) (*mcp.CallToolResult, skillListOut, error) {
	page, err := c.sess.Skills(ctx, registry.PageQuery{Category: in.Category, Tier: in.Tier, Query: in.Query, Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, skillListOut{}, c.toolError(ctx, ToolSkillList, in.Category, err)
	}
	out := skillListOut{Skills: session.CatalogItems(page.Skills), Total: page.Total, NextCursor: page.NextCursor}
	for i, sc := range page.Scores {
		out.Skills[i].Score = roundScore(sc)
	}
	return text(skillListText(page)), out, nil
}

// roundScore rounds a relevance score to the two decimals the text shows.
func roundScore(s float32) float64 { return math.Round(float64(s)*100) / 100 }

// maxListDescription bounds a description in skill_list's text, in
// characters; the structured result has it whole.
const maxListDescription = 160

// skillListText is skill_list's text: a line saying what the page holds
// and how to get the next, then one line per skill (its identity and its
// description on one line, whitespace runs made one space, cut to
// maxListDescription characters with an ellipsis, then on a ranked page
// "(score N.NN)").
func skillListText(p registry.Page) string {
	n := 80
	for _, e := range p.Skills {
		n += len(e.Key) + 3 + min(len(e.Description), 4*maxListDescription)
	}
	b := make([]byte, 0, n)
	switch {
	case p.Total == 0:
		b = append(b, "No skills match."...)
	case len(p.Skills) == 0:
		b = strconv.AppendInt(b, int64(p.Total), 10)
		b = append(b, " skills match; none after this cursor."...)
	case p.NextCursor == "":
		b = fmt.Appendf(b, "%d skills match; this page has %d, the last.", p.Total, len(p.Skills))
	default:
		b = fmt.Appendf(b, "%d skills match; this page has %d. Next page: cursor %q.", p.Total, len(p.Skills), p.NextCursor)
	}
	for i, e := range p.Skills {
		b = append(b, '\n')
		b = append(b, e.Key...)
		b = append(b, ": "...)
		b = appendListDescription(b, e.Description)
		if i < len(p.Scores) {
			b = append(b, " (score "...)
			b = strconv.AppendFloat(b, float64(p.Scores[i]), 'f', 2, 32)
			b = append(b, ')')
		}
	}
	return string(b)
}

// appendListDescription appends d as strings.Join(strings.Fields(d), " ")
// and, when that is longer than maxListDescription runes, its first
// maxListDescription-1 runes (as []rune makes them: an invalid byte is
// U+FFFD) and "…". It stops reading d at the first rune past the bound.
func appendListDescription(b []byte, d string) []byte {
	start := len(b)
	runes, cut := 0, -1
	pending := false // a space is due before the next field
	for i := 0; i < len(d); {
		r, w := rune(d[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(d[i:])
		}
		if unicode.IsSpace(r) {
			pending = runes > 0
			i += w
			continue
		}
		for k := 0; k < 2; k++ {
			// The pending space (k = 0), then the rune (k = 1).
			if k == 0 {
				if !pending {
					continue
				}
				b = append(b, ' ')
				pending = false
			} else {
				b = append(b, d[i:i+w]...)
			}
			runes++
			if runes == maxListDescription-1 {
				cut = len(b)
			}
			if runes > maxListDescription {
				head := b[start:cut]
				if utf8.Valid(head) {
					return append(b[:cut], "…"...)
				}
				return append(append(b[:start], string([]rune(string(head)))...), "…"...)
			}
		}
		i += w
	}
	return b
}
