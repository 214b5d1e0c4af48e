package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

// rawMCP is `skillgate mcp` driven with hand-written JSON-RPC lines, as a
// client of the MCP Skills extension speaks to it.
type rawMCP struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	id    int
}

func (f *fixture) rawMCP(t *testing.T, tier string) *rawMCP {
	t.Helper()
	cmd := exec.Command(bin, "--data", f.data, "mcp", "--agent", "reader", "--tier", tier, "--tenant", "acme")
	cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &rawMCP{t: t, cmd: cmd, in: in, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == nil && m.Method != "" {
				continue // a notification
			}
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(c.close)
	c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// call sends a request and returns its response line.
func (c *rawMCP) call(method, params string) string {
	c.t.Helper()
	c.id++
	fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params)
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("skillgate mcp closed its output before answering %s", method)
		}
		return l
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no response to %s %s", method, params)
	}
	return ""
}

// read reads a skill file and returns its text, or the error message.
func (c *rawMCP) read(uri string) (text string, errMsg string) {
	c.t.Helper()
	line := c.call("resources/read", fmt.Sprintf(`{"uri":%q}`, uri))
	var r struct {
		Result struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		c.t.Fatalf("%s: %v", line, err)
	}
	if r.Error != nil {
		return "", fmt.Sprintf("%d %s", r.Error.Code, r.Error.Message)
	}
	if len(r.Result.Contents) != 1 {
		c.t.Fatalf("resources/read %s: %s", uri, line)
	}
	return r.Result.Contents[0].Text, ""
}

// close ends the session: skillgate records what it found before it exits.
func (c *rawMCP) close() {
	c.in.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// TestPublishedSkillsBrokered installs a skill whose MCP server (the
// project's test server) publishes two skills through the MCP Skills
// extension; review shows them, approval binds them, and skillgate serves
// them onwards under skill://mcp~docs-helper/docs/… through its own
// skills/list, skills/get and resources/read, each file verified. Then
// the server changes a file, adds an unlisted one, lies about a size and
// serves frontmatter that differs from its SKILL.md: each is caught when
// an agent reads the skill, the agent gets an error and never the bytes,
// the skill is blocked (review, pending), the refusal and the drift are
// audited, and after a recheck and a re-approval the skill is served
// again.
func TestPublishedSkillsBrokered(t *testing.T) {
	f := newFixture(t)
	tamper := filepath.Join(t.TempDir(), "tamper")
	os.WriteFile(tamper, nil, 0o600)
	dir := filepath.Join(t.TempDir(), "docs-helper")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: docs-helper\ndescription: Team docs, through the docs server.\n---\nUse the docs server.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {"docs": {"command": "`+testServer(t)+`", "env": {"SKILLGATE_TESTSERVER": "skills", "SKILLGATE_TESTSERVER_SKILLS_TAMPER": "`+tamper+`"}}}}`), 0o644)
	if code, out, stderr := f.runCode(t, nil, "install", "--unconfined", dir); code != 0 {
		t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
	}
	var rev struct {
		PublishedSkills []struct {
			Ref, Status, SetDigest string
			Approved               bool
			Notes                  []string
		} `json:"publishedSkills"`
		Blocked []struct{ Capability, Reason string } `json:"blocked"`
	}
	review := func() {
		t.Helper()
		if err := json.Unmarshal([]byte(f.run(t, "review", "docs-helper", "--json")), &rev); err != nil {
			t.Fatal(err)
		}
	}
	review()
	if len(rev.PublishedSkills) != 2 || rev.PublishedSkills[0].Ref != "docs/skill://git-workflow/SKILL.md" || rev.PublishedSkills[0].Status != "ready" ||
		!strings.Contains(strings.Join(rev.PublishedSkills[0].Notes, "\n"), "allowed-tools Bash(git:*): ignored") {
		t.Fatalf("review: %+v", rev.PublishedSkills)
	}
	if txt := f.run(t, "review", "docs-helper"); !strings.Contains(txt, "published skills (MCP Skills extension):") {
		t.Errorf("review text:\n%s", txt)
	}
	for _, step := range [][]string{{"approve", "docs-helper"}, {"enable", "docs-helper"}} {
		if code, out, stderr := f.runCode(t, nil, step...); code != 0 {
			t.Fatalf("%s: %d\n%s\n%s", step[0], code, out, stderr)
		}
	}

	const (
		gw      = "skill://mcp~docs-helper/docs/git-workflow/SKILL.md"
		branch  = "skill://mcp~docs-helper/docs/git-workflow/references/branching.md"
		extra   = "skill://mcp~docs-helper/docs/git-workflow/references/extra.md"
		refunds = "skill://mcp~docs-helper/docs/acme/refunds/SKILL.md"
		email   = "skill://mcp~docs-helper/docs/acme/refunds/examples/email.md"
	)
	// Served onwards: listed after the registry's skills, read verified.
	c := f.rawMCP(t, "T3")
	var uris []string
	for cursor := ""; ; {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		var page struct {
			Result struct {
				Skills     []struct{ URI string } `json:"skills"`
				NextCursor string                 `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(c.call("skills/list", params)), &page); err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Result.Skills {
			if strings.HasPrefix(s.URI, "skill://mcp~") {
				uris = append(uris, s.URI)
			}
		}
		if cursor = page.Result.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(uris, " ") != refunds+" "+gw {
		t.Fatalf("relayed skills listed: %v", uris)
	}
	if get := c.call("skills/get", fmt.Sprintf(`{"uri":%q}`, gw)); !strings.Contains(get, `"uri":"`+branch+`"`) || !strings.Contains(get, `"allowed-tools":"Bash(git:*)"`) {
		t.Errorf("skills/get: %s", get)
	}
	for uri, want := range map[string]string{gw: testserver.GitWorkflowSkill, branch: testserver.GitBranching, refunds: testserver.RefundsSkill, email: testserver.RefundsEmail} {
		if got, e := c.read(uri); got != want {
			t.Errorf("read %s: %q %s, want %q", uri, got, e, want)
		}
	}
	if line := c.call("resources/read", fmt.Sprintf(`{"uri":%q}`, gw)); !strings.Contains(line, `"_meta":{"io.skillgate/origin":{"install":"docs-helper","server":"docs","uri":"skill://git-workflow/SKILL.md"}}`) {
		t.Errorf("a relayed read is not tagged with its origin: %s", line)
	}
	if _, e := c.read(extra); e != "-32602 No skill file is served at "+extra+": the approved entry of "+gw+" does not list it" {
		t.Errorf("unlisted file: %s", e)
	}
	c.close()
	if deny := f.run(t, "audit", "query", "--action", "skill.read", "--decision", "deny", "--json"); !strings.Contains(deny, extra) || !strings.Contains(deny, "not listed in the approved entry") {
		t.Errorf("the refused read of an unlisted file is not audited: %s", deny)
	}
	// An outside client verifies the relayed entries and files.
	if insp := inspectorOrEmpty(); insp != "" {
		for _, args := range [][]string{
			{"--method", "skills/get", "--uri", gw, "--verify"},
			{"--method", "skills/get", "--uri", refunds, "--verify"},
			{"--method", "skills/list", "--verify"},
		} {
			cmd := exec.Command(insp, append([]string{"--cli", "-e", "SKILLGATE_DATA=" + f.data, "-e", "SKILLGATE_AGENT=reader", "-e", "SKILLGATE_TIER=T3",
				"-e", "SKILLGATE_TENANT=acme", bin, "mcp"}, args...)...)
			out, err := cmd.CombinedOutput()
			t.Logf("mcp-inspector %v:\n%s", args, out)
			if err != nil || !strings.Contains(string(out), "no conformance errors") || strings.Contains(string(out), `"ok":false`) {
				t.Errorf("mcp-inspector %v: %v\n%s", args, err, out)
			}
			if args[1] == "skills/get" && !strings.Contains(string(out), "Verified 1 skill and 2 files") {
				t.Errorf("mcp-inspector %v:\n%s", args, out)
			}
		}
	}
	// A T4 agent may not see the skills of a tier 2 install (T0–T3).
	c4 := f.rawMCP(t, "T4")
	if get := c4.call("skills/get", fmt.Sprintf(`{"uri":%q}`, gw)); !strings.Contains(get, `"message":"No skill is served at `+gw+`"`) {
		t.Errorf("T4 skills/get: %s", get)
	}
	c4.close()

	for _, tc := range []struct {
		tamper, read, skill, reason, bytes string
	}{
		{testserver.TamperDigest, branch, "docs/skill://git-workflow/SKILL.md", "skill://git-workflow/references/branching.md is 92 bytes, the entry lists 51", testserver.TamperedBranching},
		{testserver.TamperUnlisted, gw, "docs/skill://git-workflow/SKILL.md", "its resource set is not the approved one", testserver.GitWorkflowSkill},
		{testserver.TamperSize, refunds, "docs/skill://acme/refunds/SKILL.md", "its resource set is not the approved one", testserver.RefundsSkill},
		{testserver.TamperFrontmatter, refunds, "docs/skill://acme/refunds/SKILL.md", "its resource set is not the approved one", testserver.TamperedRefundsSkill},
	} {
		t.Run(tc.tamper, func(t *testing.T) {
			os.WriteFile(tamper, []byte(tc.tamper), 0o600)
			c := f.rawMCP(t, "T3")
			line := c.call("resources/read", fmt.Sprintf(`{"uri":%q}`, tc.read))
			if !strings.Contains(line, `"code":-32603`) || !strings.Contains(line, "failed verification against its approved entry, and its skill is blocked until an operator re-approves it: "+tc.reason) {
				t.Errorf("read under tamper: %s", line)
			}
			if strings.Contains(line, `"contents"`) || strings.Contains(line, jsonText(tc.bytes)) {
				t.Errorf("the unverified bytes reached the agent: %s", line)
			}
			// Blocked at once: the skill leaves the agent's listing.
			if get := c.call("skills/get", fmt.Sprintf(`{"uri":"skill://mcp~docs-helper/%s"}`, strings.TrimPrefix(strings.Replace(tc.skill, "skill://", "", 1), "docs/"))); !strings.Contains(get, "No skill is served at") {
				t.Errorf("skills/get after drift: %s", get)
			}
			c.close()

			review()
			if len(rev.Blocked) != 1 || rev.Blocked[0].Capability != tc.skill || !strings.Contains(rev.Blocked[0].Reason, tc.reason) {
				t.Errorf("blocked after drift: %+v", rev.Blocked)
			}
			if out := f.run(t, "pending"); !strings.Contains(out, "docs-helper") {
				t.Errorf("pending: %s", out)
			}
			deny := f.run(t, "audit", "query", "--action", "skill.read", "--decision", "deny", "--json")
			if !strings.Contains(deny, tc.read) || !strings.Contains(deny, "verification failed, skill blocked until re-approved") {
				t.Errorf("audit of the refused read: %s", deny)
			}
			if drift := f.run(t, "audit", "query", "--action", "install.drift", "--subject", "docs-helper", "--json"); !strings.Contains(drift, tc.skill) {
				t.Errorf("audit of the drift: %s", drift)
			}

			// The server behaves again; recheck and re-approve serve it.
			os.WriteFile(tamper, nil, 0o600)
			if code, out, stderr := f.runCode(t, nil, "recheck", "--unconfined", "docs-helper"); code != 0 && code != 1 {
				t.Fatalf("recheck: %d\n%s\n%s", code, out, stderr)
			}
			if code, out, stderr := f.runCode(t, nil, "approve", "docs-helper"); code != 0 {
				t.Fatalf("approve: %d\n%s\n%s", code, out, stderr)
			}
			c = f.rawMCP(t, "T3")
			if got, e := c.read(tc.read); e != "" || strings.Contains(got, "IMPORTANT") {
				t.Errorf("after re-approval: %q %s", got, e)
			}
			c.close()
		})
	}
	if out := f.run(t, "audit", "verify"); !strings.HasPrefix(out, "audit log OK") {
		t.Errorf("audit verify: %s", out)
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// inspectorOrEmpty is the MCP Inspector CLI the test script installs, or
// "" when it is not there.
func inspectorOrEmpty() string {
	p := filepath.Join(os.Getenv("SKILLGATE_TEST_NPM_DIR"), "node_modules", ".bin", "mcp-inspector")
	if os.Getenv("SKILLGATE_TEST_NPM_DIR") == "" {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	return p
}
