package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// The tests in this file start real third-party MCP servers from npm as
// stdio subprocesses. Install them with
//
//	eval "$(scripts/setup-npm.sh)"
//
// which exports SKILLGATE_TEST_NPM_DIR; without it the tests skip.

// npmServer declares one npm-installed server, or skips the test.
func npmServer(t *testing.T, id, pkg string, args []string, env map[string]string) mcpclient.ServerDecl {
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
	e := map[string]string{tagEnv: fmt.Sprintf("npm-%d-%d", os.Getpid(), tagCounter.Add(1))}
	for k, v := range env {
		e[k] = v
	}
	return mcpclient.ServerDecl{ID: id, Transport: capability.TransportStdio, Command: node, Args: append([]string{entry}, args...), Env: e}
}

func npmOptions() *mcpclient.Options {
	l := testLimits()
	return &mcpclient.Options{Limits: l} // default InheritEnv: PATH, HOME, ...
}

// npmCase is one real server: the tools it must offer and the metadata a
// few of them must derive from their real annotations.
type npmCase struct {
	server capability.ServerIdentity
	tools  []string
	risk   map[string][3]string // tool → riskLevel, sideEffects, dataEgress
}

// checkNPMReport asserts tool names, derived metadata and completeness.
func checkNPMReport(t *testing.T, r *mcpclient.ServerReport, want npmCase) {
	t.Helper()
	if r.Server != want.server {
		t.Errorf("serverInfo = %+v; want %+v", r.Server, want.server)
	}
	var names []string
	for _, c := range r.Capabilities {
		names = append(names, c.CapabilityID)
		if len(c.Problems) > 0 {
			t.Errorf("%s: problems %+v", c.CapabilityID, c.Problems)
		}
		if c.Pin == "" {
			t.Errorf("%s: not pinned", c.CapabilityID)
		}
	}
	if !reflect.DeepEqual(names, want.tools) {
		t.Errorf("tools\n got %q\nwant %q", names, want.tools)
	}
	for name, w := range want.risk {
		c, ok := r.Capability(name)
		if !ok {
			t.Errorf("tool %s missing", name)
			continue
		}
		got := [3]string{string(c.Risk.RiskLevel.Value), string(c.Risk.SideEffects.Value), string(c.Risk.DataEgress.Value)}
		if got != w {
			t.Errorf("%s: derived %v; want %v (annotations %s)", name, got, w, c.Annotations)
		}
		for _, src := range []capability.Source{c.Risk.RiskLevel.Source, c.Risk.SideEffects.Source, c.Risk.DataEgress.Source} {
			if src != capability.SourceAnnotations {
				t.Errorf("%s: source %q; want annotations", name, src)
			}
		}
	}
	// Every tool of these versions carries all three hints it needs, so no
	// field stays unknown. Log the derivation for the record.
	if m := r.Missing(); len(m) != 0 {
		t.Errorf("missing metadata: %+v", m)
	}
	for _, c := range r.Capabilities {
		t.Logf("%-32s %-12s %-9s %-8s %s", c.CapabilityID, c.Risk.RiskLevel.Value, c.Risk.SideEffects.Value, c.Risk.DataEgress.Value, c.Annotations)
	}
}

func TestNPMFilesystemServer(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	decl := npmServer(t, "filesystem", "server-filesystem", []string{root}, nil)
	ctx := context.Background()
	r, err := mcpclient.Introspect(ctx, decl, npmOptions())
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, decl)
	checkNPMReport(t, r, npmCase{
		server: capability.ServerIdentity{Name: "secure-filesystem-server", Version: "0.2.0"},
		tools: []string{
			"create_directory", "directory_tree", "edit_file", "get_file_info", "list_allowed_directories",
			"list_directory", "list_directory_with_sizes", "move_file", "read_file", "read_media_file",
			"read_multiple_files", "read_text_file", "search_files", "write_file",
		},
		risk: map[string][3]string{
			"read_file":        {"read", "none", "none"},
			"list_directory":   {"read", "none", "none"},
			"create_directory": {"write", "internal", "none"},
			"write_file":       {"destructive", "internal", "none"},
			"edit_file":        {"destructive", "internal", "none"},
			"move_file":        {"destructive", "internal", "none"},
		},
	})
	// The SDK's typed Tool drops "execution"; the pin keeps it.
	if pin, _ := r.Pins.Lookup("write_file"); !strings.Contains(string(pin.Definition), `"execution":{"taskSupport":"forbidden"}`) {
		t.Errorf("pinned write_file lacks execution: %s", pin.Definition)
	}

	// Approve everything, reconnect with the pins, and use the tools.
	approved := r.Pins
	c, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{Options: *npmOptions(), Pins: &approved})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Drift(); !d.Empty() {
		t.Errorf("a plain reconnect drifted: %s", d)
	}
	path := filepath.Join(root, "note.txt")
	if _, err := c.CallTool(ctx, "write_file", map[string]any{"path": path, "content": "hello from skillgate"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, "read_text_file", map[string]any{"path": path})
	if err != nil {
		t.Fatal(err)
	}
	if got := structured(t, res); got != `{"content":"hello from skillgate"}` {
		t.Errorf("read_text_file = %s", got)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertGone(t, decl)
}

func TestNPMMemoryServer(t *testing.T) {
	t.Parallel()
	decl := npmServer(t, "memory", "server-memory", nil, map[string]string{
		"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl"),
	})
	ctx := context.Background()
	r, err := mcpclient.Introspect(ctx, decl, npmOptions())
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, decl)
	checkNPMReport(t, r, npmCase{
		server: capability.ServerIdentity{Name: "memory-server", Version: "0.6.3"},
		tools: []string{
			"add_observations", "create_entities", "create_relations", "delete_entities",
			"delete_observations", "delete_relations", "open_nodes", "read_graph", "search_nodes",
		},
		risk: map[string][3]string{
			"create_entities": {"write", "internal", "none"},
			"delete_entities": {"destructive", "internal", "none"},
			"read_graph":      {"read", "none", "none"},
		},
	})
	c, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{Options: *npmOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "skillgate", "entityType": "project", "observations": []string{"written in Go"}},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, "read_graph", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var graph struct {
		Entities []struct {
			Name string `json:"name"`
		} `json:"entities"`
	}
	if err := json.Unmarshal([]byte(structured(t, res)), &graph); err != nil || len(graph.Entities) != 1 || graph.Entities[0].Name != "skillgate" {
		t.Errorf("read_graph = %s (%v)", structured(t, res), err)
	}
}

func TestNPMEverythingServer(t *testing.T) {
	t.Parallel()
	decl := npmServer(t, "everything", "server-everything", nil, nil)
	ctx := context.Background()
	r, err := mcpclient.Introspect(ctx, decl, npmOptions())
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, decl)
	checkNPMReport(t, r, npmCase{
		server: capability.ServerIdentity{Name: "mcp-servers/everything", Version: "2.0.0"},
		tools: []string{
			"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
			"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
			"simulate-research-query", "toggle-simulated-logging", "toggle-subscriber-updates",
			"trigger-long-running-operation",
		},
		risk: map[string][3]string{
			"echo":                     {"read", "none", "none"},
			"get-env":                  {"read", "none", "none"},
			"gzip-file-as-resource":    {"write", "external", "network"},
			"toggle-simulated-logging": {"write", "internal", "none"},
		},
	})
	c, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{Options: *npmOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "echo", map[string]any{"message": "ping"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || !strings.Contains(mustJSON(t, res.Content[0]), "ping") {
		t.Errorf("echo = %s", mustJSON(t, res))
	}
	// get-env reports the server's environment: only what skillgate let
	// through.
	res, err = c.CallTool(ctx, "get-env", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	text := mustJSON(t, res.Content)
	if !strings.Contains(text, `\"PATH\"`) || !strings.Contains(text, tagEnv) {
		t.Errorf("get-env does not show the variables skillgate passed: %s", text)
	}
	if strings.Contains(text, "SKILLGATE_TEST_NPM_DIR") || strings.Contains(text, "GOFLAGS") {
		t.Errorf("the server sees variables it was not given: %s", text)
	}
}
