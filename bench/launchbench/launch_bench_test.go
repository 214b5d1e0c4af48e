// Package launchbench measures what declaring a server as a package launch
// (npx -y PKG@VER) costs, each against the anchor doing the same work in
// the same run, alternating so that the network and the machine weigh on
// both alike:
//
//   - install: `skillgate install` of a skill whose server is the npx form
//     of server-memory (the fetch in its sandbox, the tree's digest, the
//     copy into managed storage, the confined introspection, the
//     proposal, the store) against `npm install` of the same package into
//     an empty directory, each with an empty npm cache of its own;
//   - start: the fetched server started confined as a call starts it (its
//     tree bound from the hidden data directory and checked against its
//     digest first) against the same server started confined from a plain
//     node_modules directory.
//
// Run it with bench/launch.sh.
package launchbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// Package is the server both sides install and start.
const Package = "@modelcontextprotocol/server-memory@2026.8.31"

func TestMain(m *testing.M) {
	// The test binary is also the helper inside the sandbox.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		err := sandbox.Exec(os.Args[2:], os.Environ())
		os.Stderr.WriteString("sandbox-exec: " + err.Error() + "\n")
		os.Exit(126)
	}
	os.Exit(m.Run())
}

func need(b *testing.B, tools ...string) {
	b.Helper()
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			b.Skipf("%s is not installed", t)
		}
	}
}

// p50 returns the median of d in milliseconds.
func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// npmInstall is the anchor: npm install of Package into an empty
// directory with an empty cache, as a user would run it.
func npmInstall(b *testing.B) time.Duration {
	dir, cache := b.TempDir(), b.TempDir()
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "--cache", cache, Package)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("npm install: %v\n%s", err, out)
	}
	return time.Since(start)
}

// skillgateInstall runs `skillgate install` of a skill whose mcp.json
// declares the npx form of Package, in a fresh data directory.
func skillgateInstall(b *testing.B, bin string) time.Duration {
	data, skill := b.TempDir(), filepath.Join(b.TempDir(), "memory")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		b.Fatal(err)
	}
	files := map[string]string{
		"SKILL.md": "---\nname: memory\ndescription: Remember facts in a knowledge graph.\n---\nRead the graph with `read_graph`.\n",
		"mcp.json": `{"mcpServers": {"mem": {"command": "npx", "args": ["-y", "` + Package + `"]}}}`,
	}
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(skill, name), []byte(c), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "--data", data, "install", skill)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("skillgate install: %v\n%s", err, out)
	}
	return time.Since(start)
}

// BenchmarkInstall alternates `skillgate install` of the npx form and
// `npm install` of the same package, b.N times each, and reports the
// median of each and their ratio. SKILLGATE_BENCH_BIN names the skillgate
// binary (bench/launch.sh builds it).
func BenchmarkInstall(b *testing.B) {
	need(b, "npm", "node", "bwrap")
	bin := os.Getenv("SKILLGATE_BENCH_BIN")
	if bin == "" {
		b.Skip("SKILLGATE_BENCH_BIN is unset; run bench/launch.sh")
	}
	var sg, npm []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			sg, npm = append(sg, skillgateInstall(b, bin)), append(npm, npmInstall(b))
		} else {
			npm, sg = append(npm, npmInstall(b)), append(sg, skillgateInstall(b, bin))
		}
	}
	b.ReportMetric(p50(npm), "npm-install-ms")
	b.ReportMetric(p50(sg), "skillgate-install-ms")
	b.ReportMetric(p50(sg)/p50(npm), "ratio")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkStart starts server-memory b.N times from its fetched tree and
// b.N times from a plain node_modules, both confined as a call confines
// them (bwrap, the helper's limits, a state directory), alternating, and
// reports the median start (process start, initialize, tools/list) of
// each and their ratio. The fetched tree is checked against its digest
// before each start, as the gateway does.
func BenchmarkStart(b *testing.B) {
	need(b, "npm", "node", "bwrap")
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	data := b.TempDir()
	tree := filepath.Join(data, "imported", "v", "skill")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		b.Fatal(err)
	}
	rt := &sandbox.Runtime{StateRoot: filepath.Join(data, "sandbox"), Hide: []string{data}, Helper: []string{self, sandbox.HelperCommand}}

	// The fetched tree, in the hidden data directory, as an install
	// leaves it.
	l, ok, err := launch.Parse("npx", []string{"-y", Package})
	if err != nil || !ok {
		b.Fatalf("parse: %v %v", ok, err)
	}
	pkgDir := filepath.Join(data, "imported", "v", "packages", "mem")
	if err := os.MkdirAll(filepath.Dir(pkgDir), 0o755); err != nil {
		b.Fatal(err)
	}
	fetcher := launch.NewFetcher(launch.Options{Sandbox: &sandbox.Bubblewrap{Hide: []string{data}}})
	pkg, err := fetcher.Fetch(ctx, "mem", l, pkgDir, nil)
	if err != nil {
		b.Fatal(err)
	}
	x, err := pkg.Exec(pkgDir, nil)
	if err != nil {
		b.Fatal(err)
	}
	fetched := mcpclient.ServerDecl{ID: "mem", Transport: "stdio", Command: "npx", Args: []string{"-y", Package}, Exec: &x}
	fetchedBox, err := rt.Confiner(sandbox.Server{Skill: "bench/fetched", Version: "sha256:1", Dir: tree, Args: fetched.Args, Binds: x.Binds})
	if err != nil {
		b.Fatal(err)
	}
	// The plain node_modules: npm install outside the data directory.
	plainDir := b.TempDir()
	if out, err := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", plainDir, "--cache", b.TempDir(), Package).CombinedOutput(); err != nil {
		b.Fatalf("npm install: %v\n%s", err, out)
	}
	entry := filepath.Join(plainDir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	node, _ := exec.LookPath("node")
	plain := mcpclient.ServerDecl{ID: "mem", Transport: "stdio", Command: node, Args: []string{entry}}
	plainBox, err := rt.Confiner(sandbox.Server{Skill: "bench/plain", Version: "sha256:1", Dir: tree, Args: plain.Args})
	if err != nil {
		b.Fatal(err)
	}

	var verifier launch.Verifier
	dial := func(decl mcpclient.ServerDecl, c *sandbox.Bubblewrap) time.Duration {
		start := time.Now()
		if decl.Exec != nil {
			if err := verifier.Verify(ctx, decl.Exec.Dir, decl.Exec.Tree); err != nil {
				b.Fatal(err)
			}
		}
		conn, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{Options: mcpclient.Options{Dir: tree, Confine: c}})
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		conn.Close()
		return d
	}
	// The first check of the fetched tree hashes every file: measured
	// once, apart; the starts after it compare metadata.
	first := dial(fetched, fetchedBox)
	var f, p []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			f, p = append(f, dial(fetched, fetchedBox)), append(p, dial(plain, plainBox))
		} else {
			p, f = append(p, dial(plain, plainBox)), append(f, dial(fetched, fetchedBox))
		}
	}
	b.ReportMetric(p50(p), "plain-ms")
	b.ReportMetric(p50(f), "fetched-ms")
	b.ReportMetric(p50(f)/p50(p), "ratio")
	b.ReportMetric(float64(first)/float64(time.Millisecond), "fetched-first-ms")
	b.ReportMetric(0, "ns/op")
}
