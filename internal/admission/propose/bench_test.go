package propose_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/propose"
)

// benchInput is a skill with a 64 KiB SKILL.md that mentions some of 1,000
// tools on 10 servers.
func benchInput() propose.Input {
	var tools []propose.Tool
	for s := range 10 {
		for i := range 100 {
			tools = append(tools, propose.Tool{ExtensionID: fmt.Sprintf("server%d", s), CapabilityID: fmt.Sprintf("do_thing_%03d", i),
				Description: strings.Repeat("Does a thing. ", 20)})
		}
	}
	var b strings.Builder
	b.WriteString("---\nname: bench\ndescription: A benchmark.\n---\n")
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "Step %d: read the input, then call `do_thing_%03d` and server%d/do_thing_%03d with care.\n", i, i%100, i%10, (i*7)%100)
	}
	return propose.Input{Skill: "bench", SkillMD: []byte(b.String()), AllowedTools: []string{"mcp__server1__do_thing_001", "Read"}, Tools: tools}
}

func BenchmarkDeterministic(b *testing.B) {
	in := benchInput()
	b.SetBytes(int64(len(in.SkillMD)))
	for b.Loop() {
		if _, err := (propose.Deterministic{}).Propose(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	in := benchInput()
	p := &propose.Proposal{Proposer: "llm:bench"}
	for i, t := range in.Tools {
		it := propose.Item{ExtensionID: t.ExtensionID, CapabilityID: t.CapabilityID, Reason: "because"}
		if i%10 == 0 {
			it.Constraints = json.RawMessage(`{"pathGlobs":["/srv/docs/**"],"riskLevel":"read"}`)
		}
		p.Capabilities = append(p.Capabilities, it)
	}
	p.Raw, _ = json.Marshal(map[string]any{"capabilities": p.Capabilities, "policyHints": []string{}})
	accept := func(json.RawMessage) error { return nil }
	for b.Loop() {
		propose.Validate(p, in, accept)
	}
}
