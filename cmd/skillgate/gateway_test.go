package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runEnv drives the CLI with a private data directory and extra
// environment variables.
func runEnv(t *testing.T, data string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "SKILLGATE_DATA" {
			return data
		}
		return env[k]
	}}
	code := m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestTokenCLI(t *testing.T) {
	data := t.TempDir()
	code, out, errs := run(t, data, "token", "add", "--agent", "drafter", "--tier", "T3", "--tenant", "acme")
	if code != 0 || !strings.HasPrefix(out, "sgt_") || !strings.Contains(errs, "for acme/drafter@T3; the secret above is shown only now") {
		t.Fatalf("token add: %d %q %q", code, out, errs)
	}
	code, out, _ = run(t, data, "token", "ls", "--json")
	var toks []struct {
		ID, Tenant, Agent, Tier string
	}
	if err := json.Unmarshal([]byte(out), &toks); code != 0 || err != nil || len(toks) != 1 || toks[0].Agent != "drafter" || toks[0].Tier != "T3" {
		t.Fatalf("token ls: %d %q %v", code, out, err)
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"rm", []string{"token", "rm", toks[0].ID}, 0, "removed " + toks[0].ID + "\n", ""},
		{"rm again", []string{"token", "rm", toks[0].ID}, 1, "", "Error: token not found: \"" + toks[0].ID + "\"\n"},
		{"ls empty", []string{"token", "ls"}, 0, "", "no tokens; add one with 'skillgate token add --agent ID --tier T3'\n"},
		{"bad tier", []string{"token", "add", "--agent", "a", "--tier", "T7"}, 2, "", "Error: --tier: unknown agent tier \"T7\": use one of T0, T1, T2, T3, T4\n"},
		{"no agent", []string{"token", "add", "--tier", "T3"}, 2, "", "Error: invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT\n"},
		{"no subcommand", []string{"token"}, 2, "", "Error: token needs a subcommand: add, ls or rm (see 'skillgate token --help')\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, data, tc.args...)
			if code != tc.code || out != tc.out || errs != tc.errs {
				t.Errorf("code %d out %q err %q\nwant %d %q %q", code, out, errs, tc.code, tc.out, tc.errs)
			}
		})
	}
}

func TestDiscloseCLI(t *testing.T) {
	data := t.TempDir()
	examples := filepath.Join("..", "..", "examples", "skills")
	if code, _, errs := run(t, data, "scan", "--root", examples); code != 0 {
		t.Fatalf("scan: %s", errs)
	}
	head := "Skills you can load with the load_skill tool: pass a skill's <location> (its category/name). Its instructions are returned and its files appear under /skills/<name>.\n"
	tests := []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"T4", []string{"disclose", "--tier", "T4"}, 0, head + "<available_skills>\n<skill>\n<name>\narrendamiento\n</name>\n<description>\nDrafts a residential lease (contrato de arrendamiento). Use when a ticket asks for a rental contract.\n</description>\n<location>\ncontratos/arrendamiento\n</location>\n</skill>\n</available_skills>\n", ""},
		{"category", []string{"disclose", "--tier", "T4", "--category", "escrituras"}, 0, "No skills are available to you.\n", ""},
		{"nothing", []string{"disclose"}, 2, "", "Error: disclose needs --tier or --session (see 'skillgate disclose --help')\n"},
		{"unknown session", []string{"disclose", "--session", "nope"}, 1, "", "Error: no session \"nope\" in " + data + "\n"},
		{"bad session", []string{"disclose", "--session", "../x"}, 2, "", "Error: --session: invalid session id: session id \"../x\" must be letters, digits, '.', '_' and '-', starting with a letter or digit\n"},
		{"bad budget", []string{"disclose", "--tier", "T3", "--budget", "-1"}, 2, "", "Error: --budget must be positive (0: the default of 8000)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, data, tc.args...)
			if code != tc.code || out != tc.out || errs != tc.errs {
				t.Errorf("code %d out %q err %q\nwant %d %q %q", code, out, errs, tc.code, tc.out, tc.errs)
			}
		})
	}
}

func TestMCPUsage(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		errs string
	}{
		{"no tier", nil, []string{"mcp", "--agent", "a"}, "Error: --tier is required (or SKILLGATE_TIER): the agent's tier, T0–T4\n"},
		{"no agent", map[string]string{"SKILLGATE_TIER": "T3"}, []string{"mcp"}, "Error: invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT\n"},
		{"bad session", map[string]string{"SKILLGATE_TIER": "T3", "SKILLGATE_AGENT": "a"}, []string{"mcp", "--session", "a/b"}, "Error: --session: invalid session id: session id \"a/b\" must be letters, digits, '.', '_' and '-', starting with a letter or digit\n"},
		{"bad store", nil, []string{"mcp", "--agent", "a", "--tier", "T3", "--skills-store", "ftp"}, "Error: --skills-store must be local or s3, not \"ftp\"\n"},
		{"s3 without endpoint", nil, []string{"mcp", "--agent", "a", "--tier", "T3", "--skills-store", "s3"}, "Error: --skills-store s3: s3: config: endpoint is required (credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)\n"},
		{"bad mount", nil, []string{"mcp", "--agent", "a", "--tier", "T3", "--mount", "ticket"}, "Error: --mount \"ticket\": use PATH=DIR, e.g. /ticket=./ticket\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runEnv(t, t.TempDir(), tc.env, tc.args...)
			if code != 2 || out != "" || errs != tc.errs {
				t.Errorf("code %d out %q err %q\nwant 2 %q", code, out, errs, tc.errs)
			}
		})
	}
}

// TestMCPInProcess runs `skillgate mcp` in process over pipes, with the
// principal from the environment, and loads a skill.
func TestMCPInProcess(t *testing.T) {
	data := t.TempDir()
	if code, _, errs := run(t, data, "scan", "--root", filepath.Join("..", "..", "examples", "skills")); code != 0 {
		t.Fatalf("scan: %s", errs)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	old := stdin
	stdin = inR
	t.Cleanup(func() { stdin = old })
	var errb bytes.Buffer
	m := &Main{Stdout: outW, Stderr: &errb, Getenv: func(k string) string {
		return map[string]string{"SKILLGATE_DATA": data, "SKILLGATE_AGENT": "drafter", "SKILLGATE_TIER": "T3", "SKILLGATE_TENANT": "acme", "SKILLGATE_SESSION": "inproc"}[k]
	}}
	done := make(chan int, 1)
	go func() { done <- m.Run(context.Background(), []string{"mcp"}); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"skill": "compraventa"}})
	if err != nil || res.IsError {
		t.Fatalf("load_skill: %v %+v", err, res)
	}
	if got := res.StructuredContent.(map[string]any)["mount"]; got != "/skills/compraventa" {
		t.Errorf("mount = %v", got)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	if want := "skillgate mcp: session inproc for acme/drafter@T3 (resume with --session inproc)\n"; errb.String() != want {
		t.Errorf("stderr = %q, want %q", errb.String(), want)
	}
}
