package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
)

// replicaSet is two data directories (two hosts, as far as skillgate can
// tell) on one PostgreSQL database and one bucket.
type replicaSet struct {
	a, b    *fixture
	env     []string // the bucket, the credential key
	tickets string
}

// newReplicaSet makes the two data directories on a fresh database and a
// fresh prefix of the test bucket, or skips when the PostgreSQL or the S3
// test server is missing.
func newReplicaSet(t *testing.T) *replicaSet {
	t.Helper()
	if !pgtest.Available() {
		t.Skipf("%s is unset: eval \"$(scripts/setup-postgres.sh)\"", pgtest.EnvDSN)
	}
	endpoint := os.Getenv("SKILLGATE_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Skip("SKILLGATE_TEST_S3_ENDPOINT is unset: eval \"$(scripts/setup-s3.sh)\"")
	}
	dsn := pgtest.NewDatabase(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	rs := &replicaSet{tickets: t.TempDir(), env: []string{
		"SKILLGATE_CREDENTIAL_KEY=" + id.String(),
		"SKILLGATE_SKILLS_STORE=s3",
		"SKILLGATE_S3_ENDPOINT=" + endpoint,
		"SKILLGATE_S3_BUCKET=" + os.Getenv("SKILLGATE_TEST_S3_BUCKET"),
		"SKILLGATE_S3_REGION=" + os.Getenv("SKILLGATE_TEST_S3_REGION"),
		"SKILLGATE_S3_ACCESS_KEY=" + os.Getenv("SKILLGATE_TEST_S3_ACCESS_KEY"),
		"SKILLGATE_S3_SECRET_KEY=" + os.Getenv("SKILLGATE_TEST_S3_SECRET_KEY"),
		"SKILLGATE_S3_PREFIX=replicas-" + hex.EncodeToString(b[:]) + "/",
	}}
	writeFile(t, filepath.Join(rs.tickets, "ticket.md"), mcpservertest.TicketMD)
	for _, f := range []**fixture{&rs.a, &rs.b} {
		*f = &fixture{data: t.TempDir(), dsn: dsn}
		writeFile(t, filepath.Join((*f).data, "config.yaml"), "store: "+dsn+"\n")
	}
	return rs
}

// run runs the binary on f's data directory with the set's environment
// and fails the test unless it exits 0.
func (rs *replicaSet) run(t *testing.T, f *fixture, args ...string) string {
	t.Helper()
	code, out, errs := f.runCode(t, rs.env, args...)
	if code != 0 {
		t.Fatalf("skillgate %v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

// serve starts `skillgate serve` on f's data directory, on the bucket.
func (rs *replicaSet) serve(t *testing.T, f *fixture, name string) *server {
	t.Helper()
	return startServeEnv(t, []string{"--data", f.data, "serve", "--addr", "127.0.0.1:0", "--mount", "/ticket=" + rs.tickets},
		rs.env, func(line string) { t.Log("replica " + name + ": " + line) })
}

// credential sets the credential name of tenant acme to value on f's
// data directory.
func (rs *replicaSet) credential(t *testing.T, f *fixture, name, value string) {
	t.Helper()
	cmd := exec.Command(bin, "--data", f.data, "credential", "set", name, "--tenant", "acme")
	cmd.Env = append(os.Environ(), rs.env...)
	cmd.Stdin = strings.NewReader(value)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("credential set %s: %v\n%s", name, err, out)
	}
}

// token adds a token on f's data directory and returns its secret.
func (rs *replicaSet) token(t *testing.T, f *fixture, agent, tier string) string {
	t.Helper()
	var tok struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(rs.run(t, f, "token", "add", "--agent", agent, "--tier", tier, "--tenant", "acme", "--json")), &tok); err != nil {
		t.Fatal(err)
	}
	return tok.Secret
}

// headers sets a bearer token and, when set, the skillgate session to
// resume on every request.
type headers struct {
	token, session string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.token)
	if h.session != "" {
		r.Header.Set("Skillgate-Session", h.session)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// httpAgent connects an MCP client to srv with token, resuming session
// when it is set, and returns it with its skillgate session id. changed,
// when set, is told of tools/list_changed.
func httpAgent(ctx context.Context, srv *server, token, session string, changed func()) (*mcp.ClientSession, string, error) {
	opts := &mcp.ClientOptions{}
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed() }
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "replica-agent", Version: "v0"}, opts).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   srv.url + "/mcp",
		HTTPClient: &http.Client{Transport: headers{token, session}},
		MaxRetries: -1,
		// Only an agent that waits for notifications keeps an event
		// stream open.
		DisableStandaloneSSE: changed == nil,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // an MCP session, resumed by Skillgate-Session
	if err != nil {
		return nil, "", err
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skillgate://session"})
	if err != nil {
		cs.Close()
		return nil, "", err
	}
	var info struct {
		Session string `json:"session"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &info); err != nil || info.Session == "" {
		cs.Close()
		return nil, "", fmt.Errorf("session resource %q: %v", res.Contents[0].Text, err)
	}
	return cs, info.Session, nil
}

// callText calls tool and returns its text and isError, or the protocol
// error.
func callText(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, err
	}
	return textOf(res), res.IsError, nil
}

// argsHash is the audit log's hash of a call's arguments.
func argsHash(t testing.TB, args map[string]any) string {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	h, err := audit.HashArgs(b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Load parameters: 50 agents for 60 s, replica A killed after killAfter.
const (
	replicaAgents = 50
	replicaLoad   = 60 * time.Second
	killAfter     = 35 * time.Second
	agentThink    = 400 * time.Millisecond
)

// TestReplicas is issue 19's acceptance for replicas: two `skillgate
// serve` processes on one PostgreSQL database and one bucket behave as
// one. 50 agents spread over both run the seed 003 walk and capability
// calls for 60 s; meanwhile a policy change and an approval made on
// replica A take effect on replica B within a second (measured), as does
// a credential set on B's host for A's agents; tokens made on either host
// work on both; a
// one-use grant raced from both replicas is used exactly once, a rate
// limit of 100/minute holds across both, and replica A is killed with
// SIGKILL: its agents resume their sessions (loaded skills, workspace) on
// B. Afterwards the audit log verifies and holds every capability call an
// agent saw succeed, exactly once.
func TestReplicas(t *testing.T) {
	if os.Getenv(EnvE2EStore) != "postgres" {
		t.Skip("runs in the PostgreSQL pass of scripts/test.sh (SKILLGATE_E2E_STORE=postgres)")
	}
	rs := newReplicaSet(t)
	A, B := rs.a, rs.b
	root := filepath.Join(t.TempDir(), "skills")
	mcpservertest.CopyTree(t, examples, root)
	rs.run(t, A, "scan", "--root", root)

	// An imported skill with a read, a write and a destructive tool,
	// enabled; a second one waits for approval.
	rs.run(t, A, "install", importable(t, "notes", "allowed-tools: notes/echo notes/add_note notes/delete_notes\n"))
	rs.run(t, A, "approve", "notes")
	rs.run(t, A, "enable", "notes")
	rs.run(t, A, "install", importable(t, "memo", "allowed-tools: notes/echo\n"))
	// A skill whose server is started with the tenant's credential.
	vault := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(vault, 0o755)
	writeFile(t, filepath.Join(vault, "SKILL.md"), "---\nname: vault\ndescription: Reads its token.\nallowed-tools: notes/read_env\n---\nRead the token.\n")
	writeFile(t, filepath.Join(vault, "mcp.json"), `{"mcpServers": {"notes": {"command": "`+testServer(t)+`", "env": {"SKILLGATE_TESTSERVER": "normal", "VAULT_TOKEN": "${VAULT_TOKEN}"}}}}`)
	rs.credential(t, A, "VAULT_TOKEN", "first")
	rs.run(t, A, "install", vault, "--tenant", "acme", "--credential", "VAULT_TOKEN")
	rs.run(t, A, "approve", "vault")
	rs.run(t, A, "enable", "vault")

	// Reads for everyone (the rate-limited agent under its limit), the
	// destructive tool for the racers (with a grant): stored policies,
	// which every replica applies.
	base := filepath.Join(t.TempDir(), "base.cedar")
	writeFile(t, base, `@id("reads")
permit (principal, action == Action::"invoke", resource) when { resource.riskLevel == "read" && principal != Agent::"acme/limited" };
@id("limited-reads")
@constraints("{\"rateLimit\": \"100/minute\"}")
permit (principal == Agent::"acme/limited", action == Action::"invoke", resource) when { resource.riskLevel == "read" };
@id("racers")
permit (principal == Agent::"acme/racer", action == Action::"invoke", resource) when { resource.riskLevel == "destructive" };
`)
	rs.run(t, A, "policy", "put", "base", base)

	// Tokens made on either host work on both.
	admin := rs.token(t, B, "ana", "T0")
	walkers := make([]string, 10)
	for i := range walkers {
		walkers[i] = rs.token(t, A, fmt.Sprintf("walker%d", i), "T3")
	}
	limited, racer, watcher := rs.token(t, B, "limited", "T3"), rs.token(t, A, "racer", "T3"), rs.token(t, B, "watcher", "T3")

	srvA, srvB := rs.serve(t, A, "A"), rs.serve(t, B, "B")
	replicas := []*server{srvA, srvB}
	for _, s := range replicas {
		resp, err := http.Get(s.url + "/v1/ready")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s/v1/ready: %d %s", s.url, resp.StatusCode, body)
		}
	}

	// Exactly one replica leads (the /metrics gauge skillgate_leader).
	leaders := func() (a, b int) {
		return leaderGauge(t, srvA, admin), leaderGauge(t, srvB, admin)
	}
	waitUntil(t, "one leader of the two replicas", func() bool { a, b := leaders(); return a+b == 1 })

	ctx := context.Background()
	var (
		mu        sync.Mutex
		succeeded = map[string]string{} // args hash → who saw the call succeed
		// retried are the calls cut by the kill and made again on B: the
		// first may have run (and been audited) on A without its answer
		// reaching the agent, so they are audited once or twice.
		retried  = map[string]bool{}
		failures []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	var aKilled atomic.Bool
	var resumed, calls atomic.Int64
	walk := mcpservertest.Walk(t, examples, true)
	load := func(n int) {
		srv := replicas[n%2]
		token := walkers[n%len(walkers)]
		cs, sid, err := httpAgent(ctx, srv, token, "", nil)
		if err != nil {
			fail("agent %d: connect: %v", n, err)
			return
		}
		defer func() { cs.Close() }()
		for i, s := range walk {
			got, isErr, err := callText(ctx, cs, s.Tool, s.Args)
			if err != nil || got != s.Want || isErr != s.WantError {
				fail("agent %d: walk step %d (%s): %q %v %v", n, i+1, s.What, got, isErr, err)
				return
			}
		}
		lastWritten, lastPath := "", ""
		deadline := time.Now().Add(replicaLoad)
		for i := 0; time.Now().Before(deadline); i++ {
			content := fmt.Sprintf("agent %d wrote %d\n", n, i)
			workspace := fmt.Sprintf("/workspace/agent-%d-%d.md", n, i)
			echo := map[string]any{"text": fmt.Sprintf("agent %d call %d", n, i)}
			steps := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"skill_list", map[string]any{"query": "compraventa"}, "escrituras/compraventa"},
				{"read_file", map[string]any{"file_path": "/skills/compraventa/SKILL.md"}, "compraventa"},
				{"write_file", map[string]any{"file_path": workspace, "content": content}, ""},
				{"echo", echo, echo["text"].(string)},
			}
			for _, s := range steps {
				got, isErr, err := callText(ctx, cs, s.tool, s.args)
				if err != nil && srv == srvA && aKilled.Load() {
					// Replica A is gone: resume the session on B, where
					// the loaded skill and the workspace must be waiting.
					cs.Close()
					srv = srvB
					var again string
					cs, again, err = httpAgent(ctx, srv, token, sid, nil)
					if err != nil || again != sid {
						fail("agent %d: resume %s on B: %q %v", n, sid, again, err)
						return
					}
					if got, _, err := callText(ctx, cs, "ls", map[string]any{"path": "/skills"}); err != nil || got != "['/skills/compraventa/']" {
						fail("agent %d: resumed session's /skills = %q %v", n, got, err)
					}
					if lastWritten != "" {
						if got, _, err := callText(ctx, cs, "read_file", map[string]any{"file_path": lastPath}); err != nil || got != mcpservertest.CatN([]byte(lastWritten)) {
							fail("agent %d: resumed workspace = %q %v, want the last write %q", n, got, err, lastWritten)
						}
					}
					resumed.Add(1)
					if s.tool == "echo" {
						mu.Lock()
						retried[argsHash(t, s.args)] = true
						mu.Unlock()
					}
					got, isErr, err = callText(ctx, cs, s.tool, s.args)
					// The interrupted call may have run on A before it died
					// without its answer reaching the agent: a write found
					// done with this content on B is that write.
					if err == nil && isErr && s.tool == "write_file" && strings.Contains(got, "already exists") {
						if was, _, rerr := callText(ctx, cs, "read_file", map[string]any{"file_path": workspace}); rerr == nil && was == mcpservertest.CatN([]byte(content)) {
							isErr = false
						}
					}
				}
				if err != nil {
					fail("agent %d: %s: %v", n, s.tool, err)
					return
				}
				calls.Add(1)
				if isErr || !strings.Contains(got, s.want) {
					fail("agent %d: %s %v = %q (error %v)", n, s.tool, s.args, got, isErr)
					continue
				}
				switch s.tool {
				case "write_file":
					lastWritten, lastPath = content, workspace
				case "echo":
					mu.Lock()
					succeeded[argsHash(t, s.args)] = fmt.Sprintf("agent %d", n)
					mu.Unlock()
				}
			}
			time.Sleep(agentThink)
		}
	}
	start := time.Now()
	var agents sync.WaitGroup
	for n := range replicaAgents {
		agents.Go(func() { load(n) })
	}

	// While the agents work: a policy change made on A reaches B.
	time.Sleep(5 * time.Second)
	watch := make(chan struct{}, 16)
	onB, _, err := httpAgent(ctx, srvB, watcher, "", func() {
		select {
		case watch <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer onB.Close()
	note := map[string]any{"text": "propagation"}
	// Out of the watcher's scope: not even listed.
	if got, isErr, err := callText(ctx, onB, "add_note", note); err == nil && !isErr {
		t.Fatalf("add_note before the policy: %q", got)
	}
	writes := filepath.Join(t.TempDir(), "writes.cedar")
	writeFile(t, writes, `@id("writes")
permit (principal == Agent::"acme/watcher", action == Action::"invoke", resource) when { resource.riskLevel == "write" };
`)
	rs.run(t, A, "policy", "put", "writes", writes)
	committed := time.Now()
	policyDelay := waitFor1s(t, "the policy change on B", func() bool {
		_, isErr, err := callText(ctx, onB, "add_note", note)
		return err == nil && !isErr
	}, committed)

	// An approval made on A (REST) reaches B's agents: the tool appears.
	for len(watch) > 0 {
		<-watch
	}
	for _, op := range []string{"approve", "enable"} {
		req, _ := http.NewRequest("POST", srvA.url+"/v1/installs/"+op, strings.NewReader(`{"name":"memo"}`))
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s memo on A: %d %s", op, resp.StatusCode, body)
		}
	}
	committed = time.Now()
	approvalDelay := waitFor1s(t, "the approval on B", func() bool {
		res, err := onB.ListTools(ctx, nil)
		return err == nil && slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "memo__echo" })
	}, committed)
	select {
	case <-watch:
	case <-time.After(2 * time.Second):
		t.Error("B's agent got no tools/list_changed after the approval on A")
	}
	if got, isErr, err := callText(ctx, onB, "memo__echo", map[string]any{"text": "aprobado"}); err != nil || isErr || !strings.Contains(got, "aprobado") {
		t.Errorf("memo__echo on B: %q %v %v", got, isErr, err)
	}

	// Credentials set on either host reach the servers of both replicas.
	onA, _, err := httpAgent(ctx, srvA, watcher, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer onA.Close()
	readToken := func(cs *mcp.ClientSession) string {
		got, _, err := callText(ctx, cs, "read_env", map[string]any{"name": "VAULT_TOKEN"})
		if err != nil {
			return err.Error()
		}
		return got
	}
	if got := readToken(onB); !strings.Contains(got, `"value":"first"`) {
		t.Fatalf("the credential set on A, read on B: %s", got)
	}
	rs.credential(t, B, "VAULT_TOKEN", "second")
	committed = time.Now()
	credentialDelay := waitFor1s(t, "the credential change on A", func() bool {
		return strings.Contains(readToken(onA), `"value":"second"`)
	}, committed)

	// A one-use grant raced from both replicas is used exactly once.
	rs.run(t, A, "grant", "add", "acme/racer", "notes:notes/delete_notes", "--level", "destructive", "--uses", "1", "--reason", "one cleanup")
	var racers []*mcp.ClientSession
	for i := range 10 {
		cs, _, err := httpAgent(ctx, replicas[i%2], racer, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		racers = append(racers, cs)
	}
	var granted atomic.Int64
	var race sync.WaitGroup
	gate := make(chan struct{})
	for _, cs := range racers {
		race.Go(func() {
			<-gate
			got, isErr, err := callText(ctx, cs, "delete_notes", map[string]any{})
			switch {
			case err != nil:
				t.Errorf("delete_notes: %v", err)
			case !isErr:
				granted.Add(1)
			case !strings.Contains(got, "needs a human's approval"):
				t.Errorf("delete_notes refused for another reason: %q", got)
			}
		})
	}
	close(gate)
	race.Wait()
	if n := granted.Load(); n != 1 {
		t.Errorf("a one-use grant raced from both replicas was used %d times", n)
	}

	// A limit of 100/minute holds across both replicas.
	var limitedAgents []*mcp.ClientSession
	for i := range 6 {
		cs, _, err := httpAgent(ctx, replicas[i%2], limited, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		limitedAgents = append(limitedAgents, cs)
	}
	var allowed, limitedCalls atomic.Int64
	var refusal atomic.Value
	var burst sync.WaitGroup
	burstStart := time.Now()
	for _, cs := range limitedAgents {
		burst.Go(func() {
			for limitedCalls.Add(1) <= 180 {
				got, isErr, err := callText(ctx, cs, "echo", map[string]any{"text": "limited"})
				switch {
				case err != nil:
					t.Errorf("limited echo: %v", err)
					return
				case !isErr:
					allowed.Add(1)
				case !strings.Contains(got, "rate"):
					t.Errorf("limited echo refused for another reason: %q", got)
				default:
					refusal.CompareAndSwap(nil, got)
				}
			}
		})
	}
	burst.Wait()
	elapsed := time.Since(burstStart)
	// A full bucket of 100, plus what refilled meanwhile; at most a lease
	// (2 tokens) per replica may stay unspent.
	refill := int64(elapsed.Seconds()*100/60) + 1
	if n := allowed.Load(); n > 100+refill || n < 100-4 {
		t.Errorf("100/minute across both replicas allowed %d of 180 calls in %v (want 96 to %d); refused with %q", n, elapsed.Round(time.Millisecond), 100+refill, refusal.Load())
	}
	t.Logf("rate limit 100/minute: %d of 180 calls allowed across both replicas in %v", allowed.Load(), elapsed.Round(time.Millisecond))

	// Replica A dies mid-load; its agents resume on B.
	if d := killAfter - time.Since(start); d > 0 {
		time.Sleep(d)
	}
	aKilled.Store(true)
	if err := srvA.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	t.Logf("replica A killed with SIGKILL %v into the load", time.Since(start).Round(time.Millisecond))
	// B leads now, whichever led before.
	waitUntil(t, "B leading after A was killed", func() bool { return leaderGauge(t, srvB, admin) == 1 })
	t.Logf("B leads %v after A was killed", time.Since(killed).Round(time.Millisecond))
	agents.Wait()
	mu.Lock()
	for _, f := range failures {
		t.Error(f)
	}
	mu.Unlock()
	if n := resumed.Load(); n != replicaAgents/2 {
		t.Errorf("%d agents resumed their sessions on B, want the %d that were on A", n, replicaAgents/2)
	}
	t.Logf("load: %d agents, %d tool calls in %v, %d capability calls seen succeed; propagation: policy %v, approval %v (A to B), credential %v (B to A)",
		replicaAgents, calls.Load(), time.Since(start).Round(time.Second), len(succeeded), policyDelay, approvalDelay, credentialDelay)

	// Stop B; the log verifies and holds every call an agent saw
	// succeed, once.
	srvB.cmd.Process.Signal(os.Interrupt)
	srvB.cmd.Wait()
	if out := rs.run(t, B, "audit", "verify"); !strings.HasPrefix(out, "audit log OK: ") {
		t.Errorf("audit verify: %s", out)
	}
	conn, err := pgx.Connect(ctx, A.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT args_hash, count(*) FROM audit WHERE action = 'capability.invoke' AND decision = 'allow' GROUP BY args_hash`)
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]int{}
	for rows.Next() {
		var h string
		var n int
		if err := rows.Scan(&h, &n); err != nil {
			t.Fatal(err)
		}
		logged[h] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for h, who := range succeeded {
		if n := logged[h]; n != 1 && !(retried[h] && n == 2) {
			missing++
			if missing <= 5 {
				t.Errorf("a call %s saw succeed is in the audit log %d times, want once (twice if retried after the kill: %v)", who, n, retried[h])
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d calls agents saw succeed are not in the audit log exactly once", missing, len(succeeded))
	}
}

// leaderGauge reads skillgate_leader from srv's /metrics (-1 when srv
// does not answer).
func leaderGauge(t *testing.T, srv *server, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		switch l {
		case "skillgate_leader 1":
			return 1
		case "skillgate_leader 0":
			return 0
		}
	}
	t.Fatalf("%s/metrics: %d, no skillgate_leader gauge", srv.url, resp.StatusCode)
	return -1
}

// waitFor1s polls cond every 10 ms until it holds and returns how long
// after since it did; it fails the test when that took more than a
// second (and gives up after 10 s).
func waitFor1s(t *testing.T, what string, cond func() bool, since time.Time) time.Duration {
	t.Helper()
	for !cond() {
		if time.Since(since) > 10*time.Second {
			t.Fatalf("%s: not in effect after 10 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := time.Since(since)
	if d > time.Second {
		t.Errorf("%s took effect after %v, want within 1 s", what, d)
	}
	t.Logf("%s took effect %v after it was committed", what, d.Round(time.Millisecond))
	return d.Round(time.Millisecond)
}
