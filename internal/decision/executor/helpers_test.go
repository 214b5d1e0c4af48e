package executor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// The real tools/list results of the two npm servers, captured with
// scripts/capture-tools.sh (TestRealServersMatchCapture re-checks them).
const (
	githubTools = "testdata/server-github-2025.4.8.tools.json"
	gitlabTools = "testdata/server-gitlab-2025.4.25.tools.json"
)

// loadTools reads a tools/list result as the tools of server.
func loadTools(tb testing.TB, file, server string) []capability.Tool {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	return toolsOf(tb, data, server)
}

func toolsOf(tb testing.TB, data []byte, server string) []capability.Tool {
	tb.Helper()
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		tb.Fatal(err)
	}
	out := make([]capability.Tool, 0, len(res.Tools))
	for _, t := range res.Tools {
		out = append(out, capability.Tool{ExtensionID: server, CapabilityID: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return out
}

// exampleBackends parses and compiles examples/providers/NAME/backends.yaml
// against tools.
func exampleBackends(tb testing.TB, name string, tools []capability.Tool) []*executor.Backend {
	tb.Helper()
	file := filepath.Join("..", "..", "..", "examples", "providers", name, executor.BackendsFileName)
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := executor.ParseBackends(file, data, executor.Builtin())
	if err != nil {
		tb.Fatal(err)
	}
	bs, err := f.Compile(executor.Builtin(), "providers/"+name, []string{name}, tools)
	if err != nil {
		tb.Fatal(err)
	}
	return bs
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

var testPrincipal = capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}
