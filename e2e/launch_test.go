//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tests in this file install skills whose servers are declared as
// users declare them: npx PKG, uvx PKG. skillgate fetches the packages
// with npm and pip in its fetch sandbox, pins them, and runs them from
// managed storage, offline, in the run-time sandbox.

// serverNetDevices returns the network interfaces of the namespace of the
// process whose command line holds every one of parts.
func serverNetDevices(t *testing.T, parts ...string) []string {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "node") && !strings.Contains(filepath.Base(args[0]), "python") {
			continue
		}
		all := true
		for _, p := range parts {
			if !strings.Contains(string(cmdline), p) {
				all = false
			}
		}
		if !all {
			continue
		}
		dev, err := os.ReadFile(filepath.Join("/proc", e.Name(), "net", "dev"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, line := range strings.Split(string(dev), "\n")[2:] {
			if name, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				names = append(names, name)
			}
		}
		return names
	}
	t.Fatalf("no server process with %q", parts)
	return nil
}

// TestNPXServerInstalled is issue 29's first acceptance point: a skill
// whose mcp.json is exactly the npx form of server-memory installs under
// the default sandbox from the real npm registry, review shows the
// package, version and integrity, and once approved and enabled an
// agent's call goes through the gateway to the server, which runs from
// managed storage with nothing but a loopback in its network namespace.
// A file of the fetched tree changed after approval is drift: the server
// is not started again, and recheck exits 1.
func TestNPXServerInstalled(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	f := emptyFixture(t)
	dir := filepath.Join(t.TempDir(), "memory")
	writeTree(t, dir, map[string]string{
		"SKILL.md": "---\nname: memory\ndescription: Remember facts in a knowledge graph.\n---\nRead the graph with `read_graph`.\n",
		// The declaration exactly as MCP clients' configurations write it.
		"mcp.json": `{"mcpServers": {"mem": {"command":"npx","args":["-y","@modelcontextprotocol/server-memory@2026.8.31"]}}}`,
	})

	code, out, stderr := f.runCode(t, nil, "install", dir)
	if code != 0 {
		t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
	}
	r := f.launchReview(t, "memory")
	if r.State != "awaiting_approval" || len(r.Provenance.Packages) != 1 {
		t.Fatalf("review: %+v", r)
	}
	p := r.Provenance.Packages[0]
	if p.Server != "mem" || p.Launcher != "npx" || p.Ecosystem != "npm" || p.Name != "@modelcontextprotocol/server-memory" ||
		p.Version != "2026.8.31" || p.Requested != "2026.8.31" || p.Registry != "https://registry.npmjs.org/" ||
		!strings.HasPrefix(p.Integrity, "sha512-") || p.Bin != "node_modules/@modelcontextprotocol/server-memory/dist/index.js" ||
		len(p.Dependencies) == 0 || !strings.HasPrefix(p.Tree, "sha256:") {
		t.Errorf("package: %+v", p)
	}
	if r.Digest == r.Provenance.Digest || r.Provenance.Version != r.Digest {
		t.Errorf("the version's digest %s must bind the packages (content %s, version %s)", r.Digest, r.Provenance.Digest, r.Provenance.Version)
	}
	text := f.run(t, "review", "memory")
	for _, want := range []string{
		"  package: npm @modelcontextprotocol/server-memory@2026.8.31 (exactly), npx, from https://registry.npmjs.org/\n",
		"    integrity: " + p.Integrity + "\n",
		"    runs offline: " + p.Interpreter + " node_modules/@modelcontextprotocol/server-memory/dist/index.js\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("review lacks %q:\n%s", want, text)
		}
	}
	f.run(t, "approve", "memory")
	f.run(t, "enable", "memory")
	f.readPolicy(t)

	cs := f.agent(t, "T3")
	if names := toolNames(t, cs); !slices.Contains(names, "read_graph") {
		t.Fatalf("read_graph not listed: %v", names)
	}
	got, isErr := caller(cs)(t, "read_graph", map[string]any{})
	if isErr || !strings.Contains(got, `"entities"`) {
		t.Fatalf("read_graph: error=%v %q", isErr, got)
	}
	version := filepath.Join(f.data, "imported", strings.Replace(r.Digest, ":", "-", 1))
	if devs := serverNetDevices(t, version, "server-memory/dist/index.js"); !slices.Equal(devs, []string{"lo"}) {
		t.Errorf("the server's network namespace has %v, want only lo", devs)
	}
	cs.Close()

	// A file of the fetched tree changed after approval.
	index := filepath.Join(version, "packages", "mem", filepath.FromSlash(p.Bin))
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(index, append(b, []byte("\n// changed\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = f.runCode(t, nil, "recheck", "memory")
	if code != 1 || !strings.Contains(stderr, "Error: blocked: recheck of memory: server mem failed (package): ") ||
		!strings.Contains(stderr, "the fetched package of server mem changed since it was pinned (fetched package changed: "+filepath.Join(version, "packages", "mem")+" hashes to sha256:") ||
		!strings.Contains(stderr, ", approved "+p.Tree+"); it is not started: install the skill again (or skillgate update it) to fetch it anew; nothing changed") {
		t.Errorf("recheck after a change: %d\n%s\n%s", code, out, stderr)
	}
	got, isErr = caller(f.agent(t, "T3"))(t, "read_graph", map[string]any{})
	if !isErr || !strings.Contains(got, "changed since approval") {
		t.Errorf("read_graph after a change: error=%v %q", isErr, got)
	}
}
