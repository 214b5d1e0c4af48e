package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/install"
	"github.com/skillgate/skillgate/manifest"
	"github.com/skillgate/skillgate/store"
)

// The tests in this file install skills backed by real third-party MCP
// servers from npm. Install them with
//
//	eval "$(scripts/setup-npm.sh)"
//
// which exports SKILLGATE_TEST_NPM_DIR; without it the tests skip.

func npmDecl(t *testing.T, pkg string, args []string, env map[string]string) map[string]any {
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
	d := map[string]any{"command": node, "args": append([]string{entry}, args...)}
	if env != nil {
		d["env"] = env
	}
	return d
}

// TestNPMServers installs one skill per real npm server: introspection,
// metadata derived from their real annotations, approval of the proposal,
// enable, and the artefacts on disk.
func TestNPMServers(t *testing.T) {
	t.Parallel()
	files := t.TempDir()
	tests := []struct {
		skill, server, body string
		decl                func(t *testing.T) map[string]any
		serverInfo          string
		proposal            string
		risk                map[string]string
	}{
		{
			skill: "files", server: "fs", body: "allowed-tools: fs/read_text_file fs/write_file fs/list_directory\n---\nRead and write notes.\n",
			decl:       func(t *testing.T) map[string]any { return npmDecl(t, "server-filesystem", []string{files}, nil) },
			serverInfo: "secure-filesystem-server@0.2.0",
			proposal:   "fs/list_directory,fs/read_text_file,fs/write_file",
			risk: map[string]string{
				"fs/read_text_file": "read/none/none (annotations,annotations,annotations)",
				"fs/write_file":     "destructive/internal/none (annotations,annotations,annotations)",
			},
		},
		{
			skill: "memory", server: "mem", body: "---\nRemember facts with `create_entities` and `read_graph`.\n",
			decl: func(t *testing.T) map[string]any {
				return npmDecl(t, "server-memory", nil, map[string]string{"MEMORY_FILE_PATH": filepath.Join(files, "memory.jsonl")})
			},
			serverInfo: "memory-server@0.6.3",
			proposal:   "mem/create_entities,mem/read_graph",
			risk: map[string]string{
				"mem/create_entities": "write/internal/none (annotations,annotations,annotations)",
				"mem/read_graph":      "read/none/none (annotations,annotations,annotations)",
			},
		},
		{
			skill: "everything", server: "ev", body: "allowed-tools: ev/echo ev/gzip-file-as-resource\n---\nEcho and compress.\n",
			decl:       func(t *testing.T) map[string]any { return npmDecl(t, "server-everything", nil, nil) },
			serverInfo: "mcp-servers/everything@2.0.0",
			proposal:   "ev/echo,ev/gzip-file-as-resource",
			risk: map[string]string{
				"ev/echo":                  "read/none/none (annotations,annotations,annotations)",
				"ev/gzip-file-as-resource": "write/external/network (annotations,annotations,annotations)",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.skill, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			decl := tc.decl(t)
			e := newEnv(t, install.Options{})
			src := writeSkill(t, t.TempDir(), tc.skill, tc.body, map[string]any{tc.server: decl})
			r, err := e.svc.Install(ctx, src, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if r.State != store.StateAwaitingApproval {
				t.Fatalf("state %s: %s", r.State, r.Reason)
			}
			if got := r.Servers[0].Server.String(); got != tc.serverInfo {
				t.Errorf("server %s", got)
			}
			if got := strings.Join(r.Proposal.Capabilities, ","); got != tc.proposal {
				t.Errorf("proposal %s", got)
			}
			for name, want := range tc.risk {
				if got := riskOf(r, name); got != want {
					t.Errorf("%s: %s; want %s", name, got, want)
				}
			}
			r, err = e.svc.Approve(ctx, tc.skill, nil, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Enable(ctx, tc.skill, "operator:ana"); err != nil {
				t.Fatal(err)
			}
			en, err := e.svc.Enabled(ctx)
			if err != nil || len(en) != 1 {
				t.Fatalf("enabled %v %v", en, err)
			}
			if got := len(en[0].Pins[tc.server].Tools); got != strings.Count(tc.proposal, ",")+1 {
				t.Errorf("%d pins", got)
			}
			dir := e.svc.Storage().VersionDir(r.Digest)
			b, err := os.ReadFile(filepath.Join(dir, manifest.FileReport))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := manifest.ParseReport(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Servers[0].RawToolsList) == 0 || len(rep.Capabilities) < 9 {
				t.Errorf("report: %d raw pages, %d capabilities", len(rep.Servers[0].RawToolsList), len(rep.Capabilities))
			}
			if _, err := os.ReadFile(filepath.Join(dir, manifest.FileApproved)); err != nil {
				t.Error(err)
			}
			checkSchemas(t, dir)
			// A plain recheck of an honest server finds no drift.
			r, err = e.svc.Recheck(ctx, tc.skill, "operator:ana")
			if err != nil || len(r.Blocked) != 0 {
				t.Errorf("recheck: %v %+v", err, r.Blocked)
			}
		})
	}
}

// TestNPMOperatorOverride: a real server's metadata overridden downwards
// needs force and is flagged.
func TestNPMOperatorOverride(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	decl := npmDecl(t, "server-everything", nil, nil)
	e := newEnv(t, install.Options{})
	src := writeSkill(t, t.TempDir(), "zipper", "allowed-tools: ev/gzip-file-as-resource\n---\nCompress.\n", map[string]any{"ev": decl})
	if _, err := e.svc.Install(ctx, src, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	c := install.Completion{Capability: "ev/gzip-file-as-resource", DataEgress: "none", Why: "we run it offline in a sandbox without network"}
	if _, err := e.svc.Complete(ctx, "zipper", c, "operator:ana"); err == nil || !strings.Contains(err.Error(), "is below what the server declared (network, from annotations); pass --force") {
		t.Fatalf("without force: %v", err)
	}
	c.Force = true
	r, err := e.svc.Complete(ctx, "zipper", c, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if got := riskOf(r, "ev/gzip-file-as-resource"); got != "write/external/none (annotations,annotations,operator)" {
		t.Errorf("risk %s", got)
	}
	if !strings.Contains(r.Text(), "[FORCED below the server's network]") {
		t.Errorf("text:\n%s", r.Text())
	}
}
