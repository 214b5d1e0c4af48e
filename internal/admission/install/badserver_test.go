package install_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestBadServers: each way a server can fail ends as a blocked install with
// a clear message, in bounded time.
func TestBadServers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode string
		env  map[string]string
		want string // substring of the blocking reason
	}{
		{"missing-binary", nil, "server bad failed (start): "},
		{"exit", nil, "server bad failed (initialize): "},
		{"hang-initialize", nil, "server bad failed (initialize): "},
		{"hang-list", nil, "server bad failed (tools/list): "},
		{"crash-list", nil, "server bad failed (tools/list): "},
		{"many-tools", nil, "server bad failed (tools/list): "},
		{"huge-frame", nil, "server bad failed (tools/list): "},
		{"malformed-schema", nil, "4 capabilities have invalid definitions (bad/bad_minimum, bad/bad_output, bad/dangling_ref, bad/file_ref)"},
		{"huge-description", nil, "1 capability has an invalid definition (bad/huge)"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t, install.Options{})
			decl := testServerDecl(tc.mode, tc.env)
			if tc.mode == "missing-binary" {
				decl = map[string]any{"command": "/nonexistent/server"}
			}
			src := writeSkill(t, t.TempDir(), "broken", "---\nUses a broken server.\n", map[string]any{"bad": decl})
			start := time.Now()
			r, err := e.svc.Install(ctx, src, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 25*time.Second {
				t.Errorf("took %s", d)
			}
			if r.State != store.StateBlocked || !strings.Contains(r.Reason, tc.want) {
				t.Errorf("state %s reason:\n%s\nwant it to contain %q", r.State, r.Reason, tc.want)
			}
			t.Logf("%s: %s", tc.mode, r.Reason)
			checkSchemas(t, e.svc.Storage().VersionDir(r.Digest))
		})
	}
}

// TestLLMProposal: an OpenAI-compatible endpoint proposes a tool that does
// not exist and sets a risk field; both are corrected and reported.
func TestLLMProposal(t *testing.T) {
	t.Parallel()
	content := `{"capabilities":[` +
		`{"extensionId":"notes","capabilityId":"exfiltrate","reason":"needs it","constraints":null},` +
		`{"extensionId":"notes","capabilityId":"echo","reason":"echoes","constraints":null,"riskLevel":"read"}],"policyHints":[]}`
	var calls int
	llm := stubLLM(t, content, &calls)
	ctx := context.Background()
	e := newEnv(t, install.Options{Proposer: llm})
	src := writeSkill(t, t.TempDir(), "llmskill", "---\nEcho things.\n", map[string]any{"notes": testServerDecl("normal", nil)})
	r, err := e.svc.Install(ctx, src, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if r.Proposal.Proposer != "llm:m" || strings.Join(r.Proposal.Capabilities, ",") != "notes/echo" {
		t.Errorf("proposal %+v", r.Proposal)
	}
	kinds := map[string]string{}
	for _, c := range r.Proposal.Corrections {
		kinds[c.Kind] = c.Capability
	}
	if kinds[propose.KindInventedCapability] != "notes/exfiltrate" || kinds[propose.KindRiskFieldRemoved] != "notes/echo" {
		t.Errorf("corrections %s", mustJSON(t, r.Proposal.Corrections))
	}
	if got := riskOf(r, "notes/echo"); got != "read/none/none (annotations,annotations,annotations)" {
		t.Errorf("echo risk %s", got)
	}
	checkSchemas(t, e.svc.Storage().VersionDir(r.Digest))
	// Approval and the runtime never call the proposer again.
	before := calls
	if _, err := e.svc.Approve(ctx, "llmskill", nil, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Enable(ctx, "llmskill", "operator:ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Recheck(ctx, "llmskill", "operator:ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Enabled(ctx); err != nil {
		t.Fatal(err)
	}
	if calls != before || calls != 1 {
		t.Errorf("proposer called %d times", calls)
	}
	_ = fmt.Sprint
}
