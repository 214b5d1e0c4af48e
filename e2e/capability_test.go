package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeImport writes a skill to import: SKILL.md and its mcp.json.
func writeImport(t *testing.T, name, body string, servers map[string]any) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	md := "---\nname: " + name + "\ndescription: " + name + " through an MCP server.\n" + body
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// filesTree is the directory the filesystem server is given: files,
// holding allowed/seed.txt ("semilla").
func filesTree(t *testing.T) (files, allowed string) {
	t.Helper()
	files = t.TempDir()
	allowed = filepath.Join(files, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(allowed, "seed.txt"), "semilla\n")
	return files, allowed
}

// agent connects an MCP client to `skillgate mcp` as acme/drafter at tier.
func (f *fixture) agent(t *testing.T, tier string, extra ...string) *mcp.ClientSession {
	t.Helper()
	agent := "drafter"
	if len(extra) > 0 {
		agent, extra = extra[0], extra[1:]
	}
	cmd := exec.Command(bin, append([]string{"--data", f.data, "mcp", "--agent", agent, "--tier", tier, "--tenant", "acme"}, extra...)...)
	cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestCapabilityGateway is issue 5's end-to-end acceptance: an agent over
// MCP calls tools of the real npm servers server-filesystem and
// server-memory, declared with npx as users declare them and fetched at
// install, through skillgate. Reads pass; a write outside the allowed
// path globs is denied with the reason; a destructive write is refused
// until a human grants it, passes once, and is refused again when the
// grant is used up; every decision is in the audit log, which verifies,
// and editing the log makes verification fail.
func TestCapabilityGateway(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	f := emptyFixture(t)
	files, allowed := filesTree(t)

	filesSkill := writeImport(t, "files", "allowed-tools: fs/read_text_file fs/write_file fs/list_directory\n---\nRead and write notes.\n",
		map[string]any{"fs": map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", files}}})
	memSkill := writeImport(t, "memory", "---\nRemember facts with `create_entities` and `read_graph`.\n",
		map[string]any{"mem": map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-memory@2026.8.31"},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(files, "memory.jsonl")}}})
	for _, src := range []string{filesSkill, memSkill} {
		f.run(t, "install", src)
		name := filepath.Base(src)
		f.run(t, "approve", name)
		f.run(t, "enable", name)
	}

	// Reads are permitted; writes only under allowed/.
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	policy := `@id("read-anything")
permit (principal, action == Action::"invoke", resource) when { resource.riskLevel == "read" };

@id("write-in-allowed")
@constraints("{\"pathGlobs\": [\"` + allowed + `/**\"]}")
permit (principal, action == Action::"invoke", resource) when { resource.riskLevel != "read" };
`
	if err := os.WriteFile(filepath.Join(f.data, "policies", "files.cedar"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, "policy", "check")
	// policy test replays a call against the installed capabilities.
	code, out, _ := f.runCode(t, nil, "policy", "test", "--principal", `Agent::"acme/drafter"`, "--tier", "T3",
		"--capability", "fs/write_file", "--args", `{"path": "`+filepath.Join(files, "outside.txt")+`"}`)
	if code != 1 || !strings.Contains(out, "→ deny") || !strings.Contains(out, "constraint") {
		t.Fatalf("policy test: %d %q", code, out)
	}

	cs := f.agent(t, "T3")
	names := toolNames(t, cs)
	for _, want := range []string{"read_text_file", "list_directory", "files__write_file", "read_graph", "create_entities"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tool %s not listed: %v", want, names)
		}
	}
	// Approved-out tools are invisible: move_file was not in the proposal.
	if slices.Contains(names, "move_file") {
		t.Fatalf("unapproved tool listed: %v", names)
	}
	call := caller(cs)

	type step struct {
		tool    string
		args    map[string]any
		isError bool
		want    string // substring of the answer
	}
	steps := []step{
		{"read_graph", map[string]any{}, false, `"entities"`},
		{"read_text_file", map[string]any{"path": filepath.Join(allowed, "seed.txt")}, false, "semilla"},
		{"files__write_file", map[string]any{"path": filepath.Join(files, "outside.txt"), "content": "x"}, true,
			"skillgate: call to files__write_file denied: "},
		{"files__write_file", map[string]any{"path": filepath.Join(allowed, "new.txt"), "content": "nuevo"}, true,
			"skillgate: files__write_file needs a human's approval before you may call it"},
	}
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			got, isErr := call(t, s.tool, s.args)
			if isErr != s.isError || !strings.Contains(got, s.want) {
				t.Fatalf("%s %v: got (error=%v) %q\nwant (error=%v) containing %q", s.tool, s.args, isErr, got, s.isError, s.want)
			}
		}
	}
	run(steps)
	// The denial names the constraint and the argument.
	got, _ := call(t, "files__write_file", map[string]any{"path": filepath.Join(files, "outside.txt"), "content": "x"})
	if !strings.Contains(got, "pathGlobs") || !strings.Contains(got, "write-in-allowed") {
		t.Fatalf("denial does not say why: %q", got)
	}
	if _, err := os.Stat(filepath.Join(files, "outside.txt")); !os.IsNotExist(err) {
		t.Fatal("a denied write reached the server")
	}

	// A human grants one destructive use; the write passes once.
	f.run(t, "grant", "add", "acme/drafter", "fs/write_file", "--level", "destructive", "--uses", "1", "--reason", "one note")
	run([]step{
		{"files__write_file", map[string]any{"path": filepath.Join(allowed, "new.txt"), "content": "nuevo"}, false, "Successfully wrote"},
		{"files__write_file", map[string]any{"path": filepath.Join(allowed, "new2.txt"), "content": "otro"}, true,
			"needs a human's approval"},
		{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "finca", "entityType": "place", "observations": []any{"libre"}}}}, false, "finca"},
	})
	if b, err := os.ReadFile(filepath.Join(allowed, "new.txt")); err != nil || string(b) != "nuevo" {
		t.Fatalf("granted write: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(allowed, "new2.txt")); !os.IsNotExist(err) {
		t.Fatal("a write after the grant was used up reached the server")
	}

	// An agent whose tier the skills do not admit sees none of their tools.
	t4 := toolNames(t, f.agent(t, "T4"))
	for _, n := range t4 {
		if n == "read_text_file" || n == "read_graph" || strings.Contains(n, "__") {
			t.Fatalf("T4 sees %s", n)
		}
	}
	// A sub-agent gets what was forwarded, within its parent's scope: the
	// forwards its parent could not use itself are dropped.
	scout := f.agent(t, "T3", "scout", "--parent", "acme/drafter", "--parent-tier", "T3",
		"--forward", "fs/read_text_file,mem/delete_entities,fs/move_file,ev/echo")
	var capTools []string
	for _, n := range toolNames(t, scout) {
		if !slices.Contains([]string{"skill_list", "load_skill", "unload_skill", "ls", "read_file", "grep", "glob", "write_file", "edit_file"}, n) {
			capTools = append(capTools, n)
		}
	}
	if strings.Join(capTools, ",") != "read_text_file" {
		t.Fatalf("sub-agent tools: %v", capTools)
	}
	scoutCall := caller(scout)
	if got, isErr := scoutCall(t, "read_text_file", map[string]any{"path": filepath.Join(allowed, "seed.txt")}); isErr || !strings.Contains(got, "semilla") {
		t.Fatalf("sub-agent read: %v %q", isErr, got)
	}
	// Outside its scope a tool does not exist for it.
	if _, err := scout.CallTool(context.Background(), &mcp.CallToolParams{Name: "files__write_file", Arguments: map[string]any{"path": filepath.Join(allowed, "x.txt"), "content": "x"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "files__write_file"`) {
		t.Fatalf("sub-agent write: %v", err)
	}
	scout.Close()
	// A sub-agent may not rank above its parent.
	code, _, errs := f.runCode(t, nil, "mcp", "--agent", "boss", "--tier", "T1", "--tenant", "acme", "--parent", "acme/drafter", "--parent-tier", "T3")
	if code != 2 || !strings.Contains(errs, "delegation refused") {
		t.Fatalf("sub-agent above its parent: %d %q", code, errs)
	}

	// A policy edited while the agent is connected takes effect within a
	// second: a forbidden capability leaves its tool list.
	forbid := "\n@id(\"no-memory-reads\")\nforbid (principal, action, resource == Capability::\"memory:mem/read_graph\");\n"
	if err := os.WriteFile(filepath.Join(f.data, "policies", "files.cedar"), []byte(policy+forbid), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for slices.Contains(toolNames(t, cs), "read_graph") {
		if time.Now().After(deadline) {
			t.Fatal("read_graph still listed 10 s after a policy forbade it")
		}
		time.Sleep(100 * time.Millisecond)
	}

	cs.Close() // the gateway flushes its audit records on exit

	// Both servers ran confined (docs/sandbox.md), each with a state
	// directory of its version, and still did their work: the
	// filesystem server wrote in the directory its arguments name, the
	// memory server the file its environment names.
	if _, err := exec.LookPath("bwrap"); err == nil {
		for _, skill := range []string{"files", "memory"} {
			if dirs, _ := filepath.Glob(filepath.Join(f.data, "sandbox", skill, "sha256-*")); len(dirs) != 1 {
				t.Errorf("state directories of %s: %v", skill, dirs)
			}
		}
		if _, err := os.Stat(filepath.Join(files, "memory.jsonl")); err != nil {
			t.Errorf("the confined memory server did not write its file: %v", err)
		}
	}

	// Every decision is in the audit log, and the log verifies.
	out = f.run(t, "audit", "query", "--action", "capability.invoke", "--json")
	// A refusal is recorded at once, an answered call once its result is
	// passed on (docs/audit.md): compare in the order the calls were
	// decided, which each record's time gives.
	type invoke struct {
		Time              time.Time
		Subject, Decision string
	}
	var recs []invoke
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r invoke
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b invoke) int { return a.Time.Compare(b.Time) })
	var decisions []string
	for _, r := range recs {
		decisions = append(decisions, r.Subject+" "+r.Decision)
	}
	want := []string{
		"memory:mem/read_graph allow",
		"files:fs/read_text_file allow",
		"files:fs/write_file deny",
		"files:fs/write_file require_approval",
		"files:fs/write_file deny",
		"files:fs/write_file allow",
		"files:fs/write_file require_approval",
		"memory:mem/create_entities allow",
		"files:fs/read_text_file allow",
	}
	if !slices.Equal(decisions, want) {
		t.Fatalf("audit decisions:\n%s\nwant\n%s", strings.Join(decisions, "\n"), strings.Join(want, "\n"))
	}
	if out := f.run(t, "audit", "verify"); !strings.HasPrefix(out, "audit log OK: ") {
		t.Fatalf("verify: %q", out)
	}
	f.execSQL(t, `UPDATE audit SET decision = 'allow' WHERE seq = (SELECT seq FROM audit WHERE decision = 'deny' LIMIT 1)`)
	code, _, errs = f.runCode(t, nil, "audit", "verify")
	if code != 1 || !strings.Contains(errs, "audit log tampered: record ") {
		t.Fatalf("verify after an edit: %d %q", code, errs)
	}
}
