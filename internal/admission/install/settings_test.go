package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestApproveSettings is issue 32's item 6: approval sets per-capability
// constraints (replacing the proposal's) and call approval defaults,
// checked against the policy engine's rules; a refused setting records
// nothing; the settings carry over to the skill's next approved version;
// the proposer's policy hints are kept in manifest.json.
func TestApproveSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	content := `{"capabilities":[` +
		`{"extensionId":"notes","capabilityId":"echo","reason":"confirms a note","constraints":"{\"argValues\":{\"text\":[\"ok\"]}}"},` +
		`{"extensionId":"notes","capabilityId":"read_env","reason":"reads settings","constraints":null},` +
		`{"extensionId":"notes","capabilityId":"delete_notes","reason":"clears notes","constraints":null},` +
		`{"extensionId":"notes","capabilityId":"send_email","reason":"mails the note","constraints":null}],` +
		`"policyHints":["send_email is used only when the user asks to mail a note"]}`
	llm := stubLLM(t, content, nil)
	e := newEnv(t, install.Options{Proposer: llm})
	dir := t.TempDir()
	src := writeSkill(t, dir, "notes", "---\nUse the tools.\n", map[string]any{"notes": testServerDecl("normal", nil)})
	r, err := e.svc.Install(ctx, src, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.StateAwaitingApproval {
		t.Fatalf("state %s: %s", r.State, r.Reason)
	}
	if c := capView(r, "notes/echo"); string(c.Constraints) != `{"argValues":{"text":["ok"]}}` {
		t.Fatalf("review before approval: echo's proposed constraints %s", c.Constraints)
	}

	for _, tc := range []struct {
		name                   string
		constraints, approvals []string
		want                   string
	}{
		{"not approved", []string{`notes/web_search={"rateLimit":"1/minute"}`}, nil,
			`invalid request: a setting for "notes/web_search": this approval of notes approves no such capability; it approves: notes/delete_notes, notes/echo, notes/read_env, notes/send_email`},
		{"never on destructive", nil, []string{"notes/delete_notes=never"},
			"invalid request: approval settings refused: notes/delete_notes: approval never cannot waive the grant of a destructive capability: every destructive call needs a human's grant; use by-risk or always"},
		{"argValues of an argument it lacks", []string{`notes/echo={"argValues":{"lang":["es"]}}`}, nil,
			`invalid request: approval settings refused: notes/echo: constraints: argValues names the argument "lang", which notes/echo does not take (it takes text); name one of its arguments`},
		{"pathGlobs that check nothing", []string{`notes/read_env={"pathGlobs":["/srv/**"]}`}, nil,
			"invalid request: approval settings refused: notes/read_env: constraints: pathGlobs would restrict nothing: it checks the arguments path, paths, source, destination, file, directory, which notes/read_env does not take (it takes name); name the argument to check with pathArgs"},
		{"allowedDomains on a tool without arguments", []string{`notes/send_email={"allowedDomains":["example.com"]}`}, nil,
			"invalid request: approval settings refused: notes/send_email: constraints: allowedDomains would restrict nothing: it checks URL arguments, which notes/send_email does not take (it takes no arguments); name the argument to check with urlArgs"},
		{"bad rate", []string{`notes/echo={"rateLimit":"often"}`}, nil,
			`invalid request: notes/echo: constraints: invalid constraints: rateLimit "often": write it as N/unit, like "10/minute"`},
		{"not JSON", []string{`notes/echo={argValues}`}, nil,
			"invalid request: notes/echo: constraints: invalid constraints: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings, err := install.ParseSettings(tc.constraints, tc.approvals)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.svc.ApproveWith(ctx, "notes", install.ApproveOptions{Settings: settings}, "operator:ana")
			if !errors.Is(err, install.ErrUsage) || !strings.HasPrefix(err.Error(), tc.want) || !strings.HasSuffix(tc.want, " ") && err.Error() != tc.want {
				t.Errorf("approve:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(e.svc.Storage().VersionDir(r.Digest), manifest.FileApproved)); !os.IsNotExist(err) {
		t.Fatalf("a refused approval wrote manifest.json: %v", err)
	}

	settings, err := install.ParseSettings(
		[]string{`notes/echo={"rateLimit":"10/minute","argValues":{"text":["hola","adios","hola"]}}`, `notes/read_env={}`},
		[]string{"notes/echo=always", "notes/send_email=never", "notes/delete_notes=by-risk"})
	if err != nil {
		t.Fatal(err)
	}
	r, err = e.svc.ApproveWith(ctx, "notes", install.ApproveOptions{Settings: settings}, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if want := "approved 4 capabilities, with the operator's settings for 4"; r.Reason != want {
		t.Errorf("reason %q, want %q", r.Reason, want)
	}
	m := approvedManifest(t, e, r.Digest)
	got := map[string]string{}
	for _, c := range m.Capabilities {
		got[c.Name()] = string(c.Constraints) + " " + string(c.CallApproval)
	}
	want := map[string]string{
		"notes/echo":         `{"argValues":{"text":["adios","hola"]},"rateLimit":"10/minute"} always`,
		"notes/read_env":     " ",
		"notes/delete_notes": " ",
		"notes/send_email":   " never",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("manifest.json %s = %q, want %q", k, got[k], v)
		}
	}
	if h := string(m.DefaultPolicyHints); h != `["send_email is used only when the user asks to mail a note"]` {
		t.Errorf("manifest.json defaultPolicyHints = %s", h)
	}
	text := r.Text()
	for _, line := range []string{
		`      constraints: {"argValues":{"text":["adios","hola"]},"rateLimit":"10/minute"}` + "\n      calls need a grant: always\n",
		`operator: notes/echo constraints={"argValues":{"text":["adios","hola"]},"rateLimit":"10/minute"} approval=always by operator:ana` + "\n",
		"operator: notes/delete_notes approval=by-risk by operator:ana\n",
		"operator: notes/read_env constraints={} by operator:ana\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("review lacks %q:\n%s", line, text)
		}
	}
	checkSchemas(t, e.svc.Storage().VersionDir(r.Digest))

	// The next version keeps the operator's settings.
	if err := os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: notes\ndescription: A test skill that uses MCP tools.\n---\nUse the tools, version 2.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r2, err := e.svc.Install(ctx, src, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	r2, err = e.svc.ApproveWith(ctx, install.VersionRef("notes", r2.Digest), install.ApproveOptions{}, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	m2 := approvedManifest(t, e, r2.Digest)
	for _, c := range m2.Capabilities {
		if g := string(c.Constraints) + " " + string(c.CallApproval); g != want[c.Name()] {
			t.Errorf("next version: %s = %q, want %q", c.Name(), g, want[c.Name()])
		}
	}
	if len(r2.Settings) != 4 || r2.Settings[0].From != r.Digest || r2.Settings[0].By != "operator:ana" {
		t.Errorf("next version's settings %+v, want 4 carried from %s", r2.Settings, r.Digest)
	}

	// An approved version's settings change in place; nothing else may.
	v2 := install.VersionRef("notes", r2.Digest)
	if _, err := e.svc.ApproveWith(ctx, v2, install.ApproveOptions{Only: []string{"notes/echo"}, Settings: settings[:1]}, "operator:bo"); err == nil ||
		err.Error() != "invalid request: notes is already approved: only its settings (--constraints, --approval) can change; install it again to approve other capabilities or skills" {
		t.Errorf("approve --only of an approved version: %v", err)
	}
	tighter, err := install.ParseSettings(nil, []string{"notes/read_env=always"})
	if err != nil {
		t.Fatal(err)
	}
	r3, err := e.svc.ApproveWith(ctx, v2, install.ApproveOptions{Settings: tighter}, "operator:bo")
	if err != nil {
		t.Fatal(err)
	}
	if r3.State != store.StateInstalled || r3.Reason != "settings of 1 capability changed" {
		t.Errorf("settings changed: %s %q", r3.State, r3.Reason)
	}
	want["notes/read_env"] = " always"
	for _, c := range approvedManifest(t, e, r2.Digest).Capabilities {
		if g := string(c.Constraints) + " " + string(c.CallApproval); g != want[c.Name()] {
			t.Errorf("settings changed: %s = %q, want %q", c.Name(), g, want[c.Name()])
		}
	}
}

func capView(r *install.Review, name string) install.CapabilityView {
	for _, c := range r.Capabilities {
		if c.Name == name {
			return c
		}
	}
	return install.CapabilityView{}
}

func approvedManifest(t *testing.T, e *env, digest string) *manifest.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.svc.Storage().VersionDir(digest), manifest.FileApproved))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParseSettings: the flags' and the console's spelling of settings.
func TestParseSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		constraints, approvals []string
		want                   string
	}{
		{[]string{`a/b={"rateLimit":"1/second"}`}, []string{"a/b=always", "c/d=never"},
			`[{"capability":"a/b","constraints":{"rateLimit":"1/second"},"callApproval":"always"},{"capability":"c/d","callApproval":"never"}]`},
		{[]string{"a/b"}, nil, `invalid request: --constraints "a/b": write it as serverId/tool=VALUE`},
		{[]string{"=x"}, nil, `invalid request: --constraints "=x": write it as serverId/tool=VALUE`},
		{[]string{"a/b="}, nil, `invalid request: --constraints a/b= is empty: give a constraint set such as {"allowedDomains":["example.com"]}, or {} to remove the proposal's`},
		{[]string{"a/b={}", "a/b={}"}, nil, "invalid request: --constraints a/b is given twice; give one constraint set per capability"},
		{nil, []string{"a/b=sometimes"}, "invalid request: --approval a/b=sometimes: use by-risk, always or never"},
		{nil, []string{"a/b="}, "invalid request: --approval a/b=: use by-risk, always or never"},
		{nil, []string{"a/b=always", "a/b=never"}, "invalid request: --approval a/b is given twice"},
	} {
		got, err := install.ParseSettings(tc.constraints, tc.approvals)
		s := mustJSON(t, got)
		if err != nil {
			s = err.Error()
		}
		if s != tc.want {
			t.Errorf("ParseSettings(%q, %q):\n got %s\nwant %s", tc.constraints, tc.approvals, s, tc.want)
		}
	}
}

// FuzzParseSettings: any flag or form value parses or is refused with
// ErrUsage, and a parsed setting names its capability once.
func FuzzParseSettings(f *testing.F) {
	f.Add(`fs/read={"pathGlobs":["/srv/**"]}`, "fs/list=always")
	f.Add("=", "a/b=")
	f.Add("a/b={}", "a/b=never")
	f.Fuzz(func(t *testing.T, c, a string) {
		got, err := install.ParseSettings([]string{c}, []string{a})
		if err != nil {
			if !errors.Is(err, install.ErrUsage) {
				t.Fatalf("ParseSettings(%q, %q): %v is not ErrUsage", c, a, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range got {
			if s.Capability == "" || seen[s.Capability] {
				t.Fatalf("ParseSettings(%q, %q) = %+v", c, a, got)
			}
			seen[s.Capability] = true
		}
	})
}
