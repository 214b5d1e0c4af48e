package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// The tests in this file install skills backed by real third-party MCP
// servers from npm, declared as users declare them in mcp.json: npx -y
// PKG@VERSION. The install fetches each package from the npm registry into
// managed storage, pins it, and runs the server from there. They skip
// without npm and node.

// npmVersions are the versions of the servers the tests install, those
// scripts/setup-npm.sh pins for the introspection tests.
var npmVersions = map[string]string{
	"server-everything": "2026.8.31",
	"server-filesystem": "2026.8.31",
	"server-memory":     "2026.8.31",
}

// npmCacheDir is the npm cache shared by the package's fetches, so that
// each package is downloaded once per run; TestMain removes it.
var (
	npmCacheOnce sync.Once
	npmCacheDir  string
	npmCacheErr  error
)

// npmOptions are install options whose fetches share the package's npm
// cache.
func npmOptions(t *testing.T) install.Options {
	t.Helper()
	npmCacheOnce.Do(func() { npmCacheDir, npmCacheErr = os.MkdirTemp("", "skillgate-install-npm-cache-") })
	if npmCacheErr != nil {
		t.Fatal(npmCacheErr)
	}
	return install.Options{Packages: launch.NewFetcher(launch.Options{NPM: launch.NPMOptions{Cache: npmCacheDir}})}
}

// npmDecl declares @modelcontextprotocol/PKG as mcp.json does: npx -y
// PKG@VERSION followed by the server's args, with env. It skips t without
// npm or node.
func npmDecl(t *testing.T, pkg string, args []string, env map[string]string) map[string]any {
	t.Helper()
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	version, ok := npmVersions[pkg]
	if !ok {
		t.Fatalf("no pinned version of %s", pkg)
	}
	d := map[string]any{"command": "npx", "args": append([]string{"-y", "@modelcontextprotocol/" + pkg + "@" + version}, args...)}
	if env != nil {
		d["env"] = env
	}
	return d
}

// checkPackage checks that r pinned one package, pkg at its version, with
// the registry's sha512 integrity, for server.
func checkPackage(t *testing.T, r *install.Review, server, pkg string) {
	t.Helper()
	if r.Provenance == nil || len(r.Provenance.Packages) != 1 {
		t.Fatalf("provenance: %+v", r.Provenance)
	}
	p := r.Provenance.Packages[0]
	if p.Server != server || p.Name != "@modelcontextprotocol/"+pkg || p.Version != npmVersions[pkg] || !strings.HasPrefix(p.Integrity, "sha512-") {
		t.Errorf("package: server %s, %s@%s, integrity %q", p.Server, p.Name, p.Version, p.Integrity)
	}
}

// TestNPMServers installs one skill per real npm server: introspection,
// metadata derived from their real annotations, approval of the proposal,
// enable, and the artefacts on disk.
func TestNPMServers(t *testing.T) {
	t.Parallel()
	files := t.TempDir()
	tests := []struct {
		skill, server, body string
		pkg                 string
		decl                func(t *testing.T) map[string]any
		serverInfo          string
		proposal            string
		risk                map[string]string
	}{
		{
			skill: "files", server: "fs", pkg: "server-filesystem", body: "allowed-tools: fs/read_text_file fs/write_file fs/list_directory\n---\nRead and write notes.\n",
			decl:       func(t *testing.T) map[string]any { return npmDecl(t, "server-filesystem", []string{files}, nil) },
			serverInfo: "secure-filesystem-server@0.2.0",
			proposal:   "fs/list_directory,fs/read_text_file,fs/write_file",
			risk: map[string]string{
				"fs/read_text_file": "read/none/none (annotations,annotations,annotations)",
				"fs/write_file":     "destructive/internal/none (annotations,annotations,annotations)",
			},
		},
		{
			skill: "memory", server: "mem", pkg: "server-memory", body: "---\nRemember facts with `create_entities` and `read_graph`.\n",
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
			skill: "everything", server: "ev", pkg: "server-everything", body: "allowed-tools: ev/echo ev/gzip-file-as-resource\n---\nEcho and compress.\n",
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
			e := newEnv(t, npmOptions(t))
			src := writeSkill(t, t.TempDir(), tc.skill, tc.body, map[string]any{tc.server: decl})
			r, err := e.svc.Install(ctx, src, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if r.State != store.StateAwaitingApproval {
				t.Fatalf("state %s: %s", r.State, r.Reason)
			}
			checkPackage(t, r, tc.server, tc.pkg)
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
	e := newEnv(t, npmOptions(t))
	src := writeSkill(t, t.TempDir(), "zipper", "allowed-tools: ev/gzip-file-as-resource\n---\nCompress.\n", map[string]any{"ev": decl})
	r, err := e.svc.Install(ctx, src, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	checkPackage(t, r, "ev", "server-everything")
	c := install.Completion{Capability: "ev/gzip-file-as-resource", DataEgress: "none", Why: "we run it offline in a sandbox without network"}
	if _, err := e.svc.Complete(ctx, "zipper", c, "operator:ana"); err == nil || !strings.Contains(err.Error(), "is below what the server declared (network, from annotations); pass --force") {
		t.Fatalf("without force: %v", err)
	}
	c.Force = true
	r, err = e.svc.Complete(ctx, "zipper", c, "operator:ana")
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
