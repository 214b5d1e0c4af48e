package executor_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// The benchmarks' size (issue 14): 1,000 executors, each served by three
// providers.
const (
	benchExecutors = 1000
	benchProviders = 3
)

type benchEnv struct {
	cat   *executor.Catalog
	index *executor.Index
	names []string
	offs  map[*executor.Backend]executor.Off
	facts executor.Facts
	args  map[string]any
}

var (
	benchOnce         = sync.OnceValues(func() (*benchEnv, error) { return buildBenchEnv(false) })
	benchDistinctOnce = sync.OnceValues(func() (*benchEnv, error) { return buildBenchEnv(true) })
)

// buildBenchEnv builds the catalog and backends. With distinct, every
// executor's expressions differ in their source (split("/")[i - i]), so
// no two backends share a compiled program: the cold-cache case.
func buildBenchEnv(distinct bool) (*benchEnv, error) {
	var sb strings.Builder
	sb.WriteString(catalogHead + "providers:\n  - {name: github, suffix: _github}\n  - {name: gitlab, suffix: _gitlab}\n  - {name: gitea, suffix: _gitea}\nexecutors:\n")
	names := make([]string, benchExecutors)
	for i := range names {
		names[i] = fmt.Sprintf("create_thing_n%04d", i)
		fmt.Fprintf(&sb, "  - name: %s\n    description: Create thing %d.\n    inputSchema: {type: object, properties: {repository: {type: string}, title: {type: string}, body: {type: string}}, required: [repository, title], additionalProperties: false}\n", names[i], i)
	}
	cat, err := executor.ParseCatalog("bench.yaml", []byte(sb.String()))
	if err != nil {
		return nil, err
	}
	githubStyle := map[string]string{"owner": `args.repository.split("/")[0]`, "repo": `args.repository.split("/")[1]`, "title": "args.title", "body": "args.?body"}
	gitlabStyle := map[string]string{"project_id": "args.repository", "title": "args.title", "description": "args.?body"}
	gh, err := os.ReadFile("testdata/bench-github-create.schema.json")
	if err != nil {
		return nil, err
	}
	schemaGH := string(gh)
	schemaGL := `{"type":"object","properties":{"project_id":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"}},"required":["project_id","title"],"additionalProperties":false}`
	var backends []*executor.Backend
	comp := executor.NewCompiler()
	for i, name := range names {
		ex := cat.Lookup(name)
		if distinct {
			githubStyle = map[string]string{"owner": fmt.Sprintf(`args.repository.split("/")[%d - %d]`, i, i), "repo": fmt.Sprintf(`args.repository.split("/")[%d - %d]`, i+1, i), "title": "args.title", "body": "args.?body"}
		}
		for p, prov := range []string{"github", "gitlab", "gitea"} {
			args, schema := githubStyle, schemaGH
			if p == 1 {
				args, schema = gitlabStyle, schemaGL
			}
			tool := capability.Tool{ExtensionID: prov, CapabilityID: name, InputSchema: []byte(schema)}
			m, err := comp.CompileMapping(ex, tool, args)
			if err != nil {
				return nil, err
			}
			backends = append(backends, &executor.Backend{Skill: "providers/" + prov, Provider: prov, Executor: ex, Server: prov, Tool: name, Mapping: m})
		}
	}
	env := &benchEnv{cat: cat, index: executor.NewIndex(backends), names: names, offs: map[*executor.Backend]executor.Off{}}
	// A third of the executors have their preferred provider off, so the
	// resolver falls through to the next.
	for i, b := range backends {
		if i%9 == 0 {
			env.offs[b] = executor.Off{Code: executor.OffCredential, Detail: "credential GITHUB_TOKEN missing for tenant acme"}
		}
	}
	env.facts = executor.FactsFunc(func(b *executor.Backend) executor.Off { return env.offs[b] })
	env.args = map[string]any{"repository": "acme/api", "title": "Crash on start", "body": "Steps: run it."}
	return env, nil
}

func newBenchEnv(b *testing.B) *benchEnv {
	env, err := benchOnce()
	if err != nil {
		b.Fatal(err)
	}
	return env
}

func newDistinctBenchEnv(b *testing.B) *benchEnv {
	env, err := benchDistinctOnce()
	if err != nil {
		b.Fatal(err)
	}
	return env
}

// latencies records per-call durations in a fixed ring and reports p50
// and p99 as custom metrics (the same as policy's benchmarks).
type latencies struct {
	samples []time.Duration
	n       int
}

func newLatencies() *latencies { return &latencies{samples: make([]time.Duration, 1<<20)} }

func (l *latencies) add(d time.Duration) {
	l.samples[l.n%len(l.samples)] = d
	l.n++
}

func (l *latencies) report(b *testing.B) {
	s := slices.Clone(l.samples[:min(l.n, len(l.samples))])
	if len(s) == 0 {
		return
	}
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(s[len(s)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkResolveAndMap is what executors add to one call's decision:
// resolving the backend (liveness of each of its three backends, the
// tenant's and the global preference) and mapping the arguments (three
// or four CEL programs, the tool's schema validation, JSON encoding), for
// executors drawn from a seeded sequence over 1,000.
func BenchmarkResolveAndMap(b *testing.B) { benchmarkResolveAndMap(b, newBenchEnv(b)) }

// BenchmarkResolveAndMapDistinct is the same where no two executors share
// an expression's source, so every call runs programs of its own: the
// processor's caches hold few of them (not gated; the shared case is what
// a provider's backends look like).
func BenchmarkResolveAndMapDistinct(b *testing.B) { benchmarkResolveAndMap(b, newDistinctBenchEnv(b)) }

func benchmarkResolveAndMap(b *testing.B, env *benchEnv) {
	prefs := executor.Preferences{Tenant: []string{"gitea"}, Global: []string{"github", "gitlab"}}
	rng := rand.New(rand.NewPCG(1, 2))
	seq := make([]string, 1<<16)
	for i := range seq {
		seq[i] = env.names[rng.IntN(len(env.names))]
	}
	lat := newLatencies()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		r, err := env.index.Resolve(env.facts, seq[i%len(seq)], "", prefs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Backend.Mapping.Apply(env.args); err != nil {
			b.Fatal(err)
		}
		lat.add(time.Since(start))
	}
	lat.report(b)
}

// BenchmarkResolve is the resolution alone.
func BenchmarkResolve(b *testing.B) {
	env := newBenchEnv(b)
	prefs := executor.Preferences{Tenant: []string{"gitea"}, Global: []string{"github", "gitlab"}}
	lat := newLatencies()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := env.index.Resolve(env.facts, env.names[i%len(env.names)], "", prefs); err != nil {
			b.Fatal(err)
		}
		lat.add(time.Since(start))
	}
	lat.report(b)
}

// BenchmarkListLive lists the live executors of one principal at 1,000
// executors x 3 backends: what every tools/list adds.
func BenchmarkListLive(b *testing.B) {
	env := newBenchEnv(b)
	lat := newLatencies()
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if n := len(env.index.Live(env.facts)); n != benchExecutors {
			b.Fatalf("%d live executors", n)
		}
		lat.add(time.Since(start))
	}
	lat.report(b)
}

// BenchmarkApply is one mapping alone (GitHub's create_issue: two splits,
// two copies, an optional), and BenchmarkApplyByHand the anchor: the same
// tool arguments written in Go, validated against the same schema and
// encoded.
func BenchmarkApply(b *testing.B) {
	env := newBenchEnv(b)
	_, bs := env.index.Lookup(env.names[0])
	m := bs[1].Mapping // github
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Apply(env.args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyByHand is the anchor of BenchmarkApply: GitHub's
// create_issue arguments written in Go (the same splits and copies),
// checked against the same schema by the jsonschema library and encoded
// by encoding/json.
func BenchmarkApplyByHand(b *testing.B) {
	env := newBenchEnv(b)
	schema, err := jsonschema.NewCompiler().Compile("testdata/bench-github-create.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		repo := env.args["repository"].(string)
		parts := strings.Split(repo, "/")
		out := map[string]any{"owner": parts[0], "repo": parts[1], "title": env.args["title"]}
		if body, ok := env.args["body"]; ok {
			out["body"] = body
		}
		if err := schema.Validate(out); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
}
