package vfsbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/bench/internal/benchbin"
)

var bin string

// peerEnv makes the test binary the peer server over the tree it names.
const peerEnv = "SKILLGATE_BENCH_PEER"

func TestMain(m *testing.M) {
	if root := os.Getenv(peerEnv); root != "" {
		if err := NewPeer(root).Serve(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(benchbin.Main(m, filepath.Join("..", ".."), &bin))
}

const (
	skills        = 100
	filesPerSkill = 100 // SKILL.md included: 10,000 files
	category      = "bench"
	bigPath       = "/skills/skill000/references/big.md"
)

// hundredKB is about 100 KB of text in 2,000 lines (the default read
// limit, so the whole file is formatted and sent).
func hundredKB() string {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "%05d La parte vendedora transmite la finca libre.\n", i)
	}
	return b.String()
}

// writeTree writes 100 skills of 100 files each under root/bench/: a
// SKILL.md and 99 files of 1–3 KB in three directories, one file in 50
// holding "needle"; skill000's references/big.md is the 100 KB file
// read_file reads instead of one of them. SKILLGATE_BENCH_DIR keeps the
// tree (and reuses it) between runs.
func writeTree(b *testing.B) string {
	var root string
	if dir := os.Getenv("SKILLGATE_BENCH_DIR"); dir != "" {
		root = filepath.Join(dir, "vfs10k")
		if _, err := os.Stat(filepath.Join(root, ".complete")); err == nil {
			return root
		}
		os.RemoveAll(root)
	} else {
		root = filepath.Join(b.TempDir(), "vfs10k")
	}
	line := "Cláusula de saneamiento por evicción y vicios ocultos conforme al Código Civil.\n"
	for s := range skills {
		name := fmt.Sprintf("skill%03d", s)
		dir := filepath.Join(root, category, name)
		for f := range filesPerSkill {
			var rel, body string
			switch {
			case f == 0:
				rel = "SKILL.md"
				body = "---\nname: " + name + "\ndescription: Benchmark skill " + name + " for grep and read_file.\n---\n# " + name + "\n\n" + strings.Repeat(line, 10)
			case s == 0 && f == 1:
				rel, body = "references/big.md", hundredKB()
			default:
				rel = filepath.Join([]string{"references", "resources", "notes"}[f%3], fmt.Sprintf("doc%03d.md", f))
				var sb strings.Builder
				n := 12 + (s*7+f*13)%25
				for i := range n {
					if (s*100+f)%50 == 0 && i == n/2 {
						sb.WriteString("Aquí está la needle que buscamos.\n")
					}
					sb.WriteString(line)
				}
				body = sb.String()
			}
			p := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

func connect(b *testing.B, cmd *exec.Cmd) *mcp.ClientSession {
	b.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "vfsbench", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func call(b *testing.B, cs *mcp.ClientSession, tool string, args map[string]any) string {
	b.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	var text string
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		b.Fatalf("%s: %s", tool, text)
	}
	return text
}

// BenchmarkFS calls each tool on skillgate (`skillgate mcp` over the tree
// scanned as a root, all 100 skills loaded) and on the peer, in turn
// (rotating the order), with the same go-sdk client over stdio. The first
// answers of the two must be identical. It reports each side's p50 and p99
// (µs) and the ratio of the p50s (skillgate / peer).
func BenchmarkFS(b *testing.B) {
	root := writeTree(b)
	data := b.TempDir()
	if out, err := exec.Command(bin, "--data", data, "scan", "--root", root, "--max-dirs", "100000").CombinedOutput(); err != nil {
		b.Fatalf("scan: %v\n%s", err, out)
	}
	sgCmd := exec.Command(bin, "--data", data, "mcp", "--agent", "bench", "--tier", "T3", "--tenant", "bench")
	if p := os.Getenv("SKILLGATE_BENCH_CPUPROFILE"); p != "" { // profile skillgate during the run
		sgCmd.Env = append(os.Environ(), "SKILLGATE_CPUPROFILE="+p)
	}
	sg := connect(b, sgCmd)
	for s := range skills {
		call(b, sg, "load_skill", map[string]any{"skill": fmt.Sprintf("%s/skill%03d", category, s)})
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	peerCmd := exec.Command(self)
	peerCmd.Env = append(os.Environ(), peerEnv+"="+root)
	peer := connect(b, peerCmd)

	for _, bc := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"read_file_100KB", "read_file", map[string]any{"file_path": bigPath}},
		{"grep_10k_files", "grep", map[string]any{"pattern": "needle", "path": "/skills"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			want := call(b, peer, bc.tool, bc.args)
			if got := call(b, sg, bc.tool, bc.args); got != want {
				b.Fatalf("%s: skillgate and the peer differ:\nskillgate %.300q\npeer      %.300q", bc.tool, got, want)
			}
			sides := []struct {
				name string
				cs   *mcp.ClientSession
				lat  []time.Duration
			}{{name: "skillgate", cs: sg}, {name: "peer", cs: peer}}
			for i := range sides {
				for range 10 { // warm up
					call(b, sides[i].cs, bc.tool, bc.args)
				}
			}
			b.ResetTimer()
			n := 0
			for b.Loop() {
				for k := range sides {
					s := &sides[(n+k)%len(sides)]
					start := time.Now()
					call(b, s.cs, bc.tool, bc.args)
					s.lat = append(s.lat, time.Since(start))
				}
				n++
			}
			b.StopTimer()
			p50 := map[string]float64{}
			for _, s := range sides {
				slices.Sort(s.lat)
				q := func(f float64) float64 { return float64(s.lat[int(f*float64(len(s.lat)-1))].Nanoseconds()) / 1e3 }
				p50[s.name] = q(0.5)
				b.ReportMetric(q(0.5), s.name+"-p50-µs")
				b.ReportMetric(q(0.99), s.name+"-p99-µs")
			}
			b.ReportMetric(p50["skillgate"]/p50["peer"], "ratio-p50")
		})
	}
}
