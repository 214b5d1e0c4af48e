package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// schemaURL is the in-memory location a tool schema is compiled under.
const schemaURL = "urn:skillgate:tool-schema"

// checkSchema validates one tool schema (field is "inputSchema" or
// "outputSchema"): within the size and depth limits, a JSON object with "type": "object" (MCP
// requires both schemas to describe an object), and compiling as JSON Schema
// (2020-12 unless its $schema names another draft) without external
// references.
func checkSchema(field string, raw json.RawMessage, l Limits) *capability.Problem {
	if len(raw) > l.MaxSchemaBytes {
		return &capability.Problem{Code: capability.ProblemTooLarge, Field: field, Message: fmt.Sprintf("is %d bytes; the limit is %d", len(raw), l.MaxSchemaBytes)}
	}
	if d := jsonDepth(raw); d > l.MaxSchemaDepth {
		return &capability.Problem{Code: capability.ProblemTooLarge, Field: field, Message: fmt.Sprintf("nests %d levels deep; the limit is %d", d, l.MaxSchemaDepth)}
	}
	members, err := strictjson.Object(raw)
	if err != nil {
		return &capability.Problem{Code: capability.ProblemInvalidSchema, Field: field, Message: describeObjectErr(err, "the schema")}
	}
	typeOK := false
	for _, m := range members {
		if m.Key == "type" {
			s, ok := strictjson.String(m.Value)
			typeOK = ok && s == "object"
		}
	}
	if !typeOK {
		return &capability.Problem{Code: capability.ProblemInvalidSchema, Field: field, Message: `must have "type": "object"`}
	}
	if _, err := capability.CompileSchema(schemaURL, raw); err != nil {
		return &capability.Problem{Code: capability.ProblemInvalidSchema, Field: field, Message: "does not compile: " + oneLine(err.Error())}
	}
	return nil
}

// oneLine folds the library's multi-line error trees into one line.
func oneLine(s string) string {
	fields := strings.Fields(s)
	out := strings.Join(fields, " ")
	if len(out) > 1024 {
		cut := 1024
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "…"
	}
	return out
}

// jsonDepth returns the maximum nesting depth of objects and arrays in raw,
// which must be valid JSON (callers check it after). It scans bytes without
// allocating, so it is cheap to run before anything expensive.
func jsonDepth(raw []byte) int {
	depth, max := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				max = depth
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return max
}
