package propose_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// The test in this file proposes from the inventory of real third-party MCP
// servers from npm, introspected by package mcpclient. Install them with
//
//	eval "$(scripts/setup-npm.sh)"
//
// which exports SKILLGATE_TEST_NPM_DIR; without it the test skips.

// npmInventory introspects one npm-installed server, or skips the test.
func npmInventory(t *testing.T, id, pkg string, args ...string) []propose.Tool {
	t.Helper()
	dir := os.Getenv("SKILLGATE_TEST_NPM_DIR")
	if dir == "" {
		t.Skip("SKILLGATE_TEST_NPM_DIR is not set; run: eval \"$(scripts/setup-npm.sh)\"")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("%s: %v (re-run scripts/setup-npm.sh)", pkg, err)
	}
	decl := mcpclient.ServerDecl{ID: id, Transport: capability.TransportStdio, Command: node, Args: append([]string{entry}, args...)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := mcpclient.Introspect(ctx, decl, nil)
	if err != nil {
		t.Fatal(err)
	}
	return propose.ToolsFromCapabilities(r.Capabilities)
}

func TestNPMInventory(t *testing.T) {
	t.Parallel()
	tools := append(npmInventory(t, "filesystem", "server-filesystem", t.TempDir()),
		npmInventory(t, "everything", "server-everything")...)
	md := "---\nname: notes\ndescription: Summarise notes.\nallowed-tools: mcp__everything__get-sum Read\n---\n" +
		"# Notes\n" + // line 6
		"Read each note with `read_text_file`; list them with filesystem/list_directory.\n" + // line 7
		"Check the locale with get-env. Then echo a summary.\n" // line 8
	in := propose.Input{Skill: "notes", SkillMD: []byte(md), AllowedTools: []string{"mcp__everything__get-sum", "Read"}, Tools: tools}

	t.Run("deterministic", func(t *testing.T) {
		p, err := propose.Deterministic{}.Propose(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		v, cs := propose.Validate(p, in, nil)
		want := `{"proposer":"deterministic","capabilities":[` +
			`{"extensionId":"everything","capabilityId":"get-env","reason":"mentioned in SKILL.md line 8"},` +
			`{"extensionId":"everything","capabilityId":"get-sum","reason":"listed in allowed-tools as mcp__everything__get-sum"},` +
			`{"extensionId":"filesystem","capabilityId":"list_directory","reason":"mentioned in SKILL.md line 7"},` +
			`{"extensionId":"filesystem","capabilityId":"read_text_file","reason":"mentioned in SKILL.md line 7"}]}`
		if got := mustJSON(t, v); got != want || cs != nil {
			t.Errorf("proposal\n got %s\nwant %s\ncorrections %+v", got, want, cs)
		}
	})

	t.Run("llm", func(t *testing.T) {
		content := `{"capabilities":[{"extensionId":"filesystem","capabilityId":"read_text_file","reason":"reads notes","constraints":null,"riskLevel":"read"},` +
			`{"extensionId":"filesystem","capabilityId":"delete_file","reason":"cleans up","constraints":null}],"policyHints":[]}`
		prompts := make(chan string, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			prompts <- string(b)
			io.WriteString(w, chatReply(t, content, nil, "stop"))
		}))
		defer srv.Close()
		llm, err := propose.NewOpenAI(propose.OpenAIConfig{BaseURL: srv.URL, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := llm.Propose(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		// The real schema of read_text_file is summarised for the model.
		prompt := <-prompts
		if want := `\"capabilityId\":\"read_text_file\"`; !strings.Contains(prompt, want) || !strings.Contains(prompt, `\"path: string, required\"`) {
			t.Errorf("prompt lacks read_text_file and its parameters: %.2000s", prompt)
		}
		v, cs := propose.Validate(p, in, nil)
		if got, want := mustJSON(t, v.Capabilities), `[{"extensionId":"filesystem","capabilityId":"read_text_file","reason":"reads notes"}]`; got != want {
			t.Errorf("capabilities\n got %s\nwant %s", got, want)
		}
		var kinds []string
		for _, c := range cs {
			kinds = append(kinds, c.Kind+" "+c.CapabilityID+" "+c.Field)
		}
		if got, want := strings.Join(kinds, "; "), "invented_capability delete_file ; risk_field_removed read_text_file riskLevel"; got != want {
			t.Errorf("corrections\n got %s\nwant %s", got, want)
		}
	})
}
