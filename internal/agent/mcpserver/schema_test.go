package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestOutputSchemasPortable: every output schema the gateway's tools
// advertise gives each node a single type (the MCP Inspector's --strict
// flags ["null","array"] as not portable), and skill_list's lists are
// arrays even when empty.
func TestOutputSchemasPortable(t *testing.T) {
	e := newEnv(t, storages[0])
	c := e.connect(t, principal("schemas", skill.T1), "")
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if ty, ok := x["type"]; ok {
				if _, isStr := ty.(string); !isStr {
					bad = append(bad, fmt.Sprintf("%s.type = %v", path, ty))
				}
			}
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	for _, tl := range res.Tools {
		if tl.OutputSchema == nil {
			continue
		}
		b, _ := json.Marshal(tl.OutputSchema)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		walk(tl.Name+".outputSchema", v)
	}
	if len(bad) > 0 {
		t.Errorf("output schemas with a type that is not a single name:\n%v", bad)
	}

	var out map[string]any
	c.structured(t, "skill_list", map[string]any{"query": "no skill has this"}, &out)
	if got, _ := json.Marshal(out); string(got) != `{"next_cursor":"","skills":[],"total":0}` {
		t.Errorf("skill_list with no match: %s", got)
	}
}
