package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/app"
)

// TestPolicyCheckSchema checks that `policy check` refuses policies that
// can never apply under skillgate's schema (exit 1), reports policies that
// may fail to evaluate as warnings (exit 0), and words syntax errors as
// file:line:col, what and the fix.
func TestPolicyCheckSchema(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	typo := file("typo.cedar", "@id(\"read\")\npermit (principal, action == Action::\"invoke\", resource) when { resource.riskLvel == \"read\" };\n")
	user := file("user.cedar", "permit (principal is User, action, resource);\n")
	warn := file("warn.cedar", "forbid (principal, action, resource) when { principal.parent.tier == \"T1\" };\n")
	args := file("args.cedar", "permit (principal, action, resource) when { context.args has path && context.args.path like \"/srv/*\" };\n")
	syntax := file("syntax.cedar", "permit (principal, action = Action::\"invoke\", resource);\n")
	tests := []struct {
		name      string
		files     []string
		code      int
		out, errs string
	}{
		{"misspelt attribute", []string{typo}, 1, "",
			typo + `:1: error: policy "read": Capability has no attribute riskLvel (did you mean riskLevel?); its attributes are capability, egress, extension, riskLevel, sideEffects, skill, skillTier, trust (see docs/schemas/skillgate.cedarschema)` + "\n"},
		{"unknown entity type", []string{user}, 1, "",
			user + `:1: error: unknown entity type User; skillgate's types are Agent, Capability, Extension, Skill, Action (see docs/schemas/skillgate.cedarschema)` + "\n"},
		{"warning", []string{warn}, 0, "ok: 1 policy in 1 source\n",
			warn + `:1: warning: Agent.parent may be absent and the policy then fails to evaluate; test it first: … has parent && …` + "\n"},
		{"arguments", []string{args}, 0, "ok: 1 policy in 1 source\n", ""},
		{"syntax", []string{syntax}, 1, "", syntax + `:1:29: expected "," but found "="; compare with ==, not =` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, t.TempDir(), append([]string{"policy", "check"}, tc.files...)...)
			if code != tc.code || out != tc.out || errs != tc.errs {
				t.Errorf("%d %q %q\nwant %d %q %q", code, out, errs, tc.code, tc.out, tc.errs)
			}
		})
	}
	code, out, _ := run(t, t.TempDir(), "policy", "check", "--json", warn, typo)
	var rep app.CheckReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.OK || len(rep.Errors) != 1 || len(rep.Warnings) != 1 {
		t.Errorf("--json: %d %v %s", code, err, out)
	}
}

// TestPolicyCheckArguments checks that `policy check` types call arguments
// from the capabilities' input schemas: a forbid that fails to evaluate
// for a capability is a warning naming it, the argument and the fix, in
// text and in --json, and the exit code stays 0.
func TestPolicyCheckArguments(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps.json")
	pol := filepath.Join(dir, "files.cedar")
	write(t, dir, map[string]string{
		"caps.json": `[
 {"skill":"files","trust":"imported","tier":2,"invokableBy":["T3"],"state":"enabled","extensionId":"fs","capabilityId":"write_file","enabled":true,
  "riskLevel":"write","sideEffects":"internal","dataEgress":"none",
  "inputSchema":{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}},"content":{"type":"string"}},"required":["paths","content"]}},
 {"skill":"files","trust":"imported","tier":2,"invokableBy":["T3"],"state":"enabled","extensionId":"fs","capabilityId":"read_file","enabled":true,
  "riskLevel":"read","sideEffects":"none","dataEgress":"none",
  "inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}
]`,
		"files.cedar": "@id(\"permit-all\")\npermit (principal, action, resource);\n\n@id(\"no-etc\")\nforbid (principal, action, resource in Skill::\"files\")\n  when { context.args.paths like \"/etc/*\" };\n",
	})
	want := []string{
		pol + `:4: warning: policy "no-etc" fails to evaluate for capability files:fs/read_file: reads context.args.paths, which it does not take; test it first: context.args has paths && …`,
		pol + `:4: warning: policy "no-etc" fails to evaluate for capability files:fs/write_file: context.args.paths is a Set of String, and like needs a String; test its elements with .contains("…") or .containsAny([…]), or constrain the argument with @constraints`,
	}
	code, out, errs := run(t, t.TempDir(), "policy", "check", "--capabilities", caps, pol)
	if code != 0 || out != "ok: 2 policies in 1 source\n" || errs != strings.Join(want, "\n")+"\n" {
		t.Errorf("text: %d %q\n got %q\nwant %q", code, out, errs, strings.Join(want, "\n")+"\n")
	}
	code, out, _ = run(t, t.TempDir(), "policy", "check", "--json", "--capabilities", caps, pol)
	var rep app.CheckReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || strings.Join(rep.Warnings, "\n") != strings.Join(want, "\n") ||
		len(rep.Findings) != 2 || strings.Join(rep.Findings[1].Capabilities, ",") != "files:fs/write_file" {
		t.Errorf("--json: %d %v %s", code, err, out)
	}
	// Without capabilities (no registry, no file) only the schema checks run.
	code, out, errs = run(t, filepath.Join(t.TempDir(), "none"), "policy", "check", pol)
	if code != 0 || out != "ok: 2 policies in 1 source\n" || errs != "" {
		t.Errorf("no capabilities: %d %q %q", code, out, errs)
	}
}

// TestPolicyCheckConstraintsThatCannotApply: a permit whose @constraints
// check arguments some capability it covers does not take lets those
// calls through unchecked; policy check warns, naming the permit, the
// constraint and the capabilities. The README's first write-in-notes
// (every non-read tool, pathGlobs) is the case; its fix, scoped to the
// files skill, is not warned about.
func TestPolicyCheckConstraintsThatCannotApply(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps.json")
	record := func(skill, capID, risk, props string) string {
		return `{"skill":"` + skill + `","trust":"imported","tier":2,"invokableBy":["T3"],"state":"enabled","extensionId":"` + strings.Split(capID, "/")[0] +
			`","capabilityId":"` + strings.Split(capID, "/")[1] + `","enabled":true,"riskLevel":"` + risk + `","sideEffects":"internal","dataEgress":"none",` +
			`"inputSchema":{"type":"object","properties":{` + props + `}}}`
	}
	write(t, dir, map[string]string{"caps.json": "[" + strings.Join([]string{
		record("files", "fs/write_file", "write", `"path":{"type":"string"},"content":{"type":"string"}`),
		record("files", "fs/move_file", "destructive", `"source":{"type":"string"},"destination":{"type":"string"}`),
		record("files", "fs/list_allowed_directories", "read", ``),
		record("notes", "notes/delete_notes", "destructive", `"ids":{"type":"array"}`),
		record("notes", "notes/purge", "destructive", ``),
	}, ",") + "]"})
	const readAnything = "@id(\"read-anything\")\npermit (principal, action == Action::\"invoke\", resource) when { resource.riskLevel == \"read\" };\n"
	tests := []struct {
		name, policy string
		warnings     []string
	}{
		{"README before the fix", readAnything + "@id(\"write-in-notes\")\n@constraints(\"{\\\"pathGlobs\\\": [\\\"/srv/notes/**\\\"]}\")\npermit (principal, action == Action::\"invoke\", resource) when { resource.riskLevel != \"read\" };\n",
			[]string{`POL:3: warning: policy "write-in-notes" permits capabilities notes:notes/delete_notes and notes:notes/purge with no pathGlobs check: pathGlobs only checks the arguments path, paths, source, destination, file, directory, which they do not take; narrow the permit's scope or condition to the capabilities pathGlobs restricts, or permit those with their own policy`}},
		{"README after the fix", readAnything + "@id(\"write-in-notes\")\n@constraints(\"{\\\"pathGlobs\\\": [\\\"/srv/notes/**\\\"]}\")\npermit (principal, action == Action::\"invoke\", resource in Skill::\"files\") when { resource.riskLevel != \"read\" };\n",
			nil},
		{"pathArgs; argValues refuses calls without its arguments", "@id(\"modes\")\n@constraints(\"{\\\"argValues\\\": {\\\"mode\\\": [\\\"ro\\\"]}, \\\"pathGlobs\\\": [\\\"/srv/**\\\"], \\\"pathArgs\\\": [\\\"source\\\"]}\")\npermit (principal, action == Action::\"invoke\", resource in Skill::\"files\");\n",
			[]string{
				`POL:1: warning: policy "modes" permits capabilities files:fs/list_allowed_directories and files:fs/write_file with no pathGlobs check: pathGlobs only checks the argument source, which they do not take; narrow the permit's scope or condition to the capabilities pathGlobs restricts, or permit those with their own policy`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := filepath.Join(t.TempDir(), "files.cedar")
			write(t, filepath.Dir(pol), map[string]string{"files.cedar": tc.policy})
			code, _, errs := run(t, t.TempDir(), "policy", "check", "--capabilities", caps, pol)
			want := ""
			for _, w := range tc.warnings {
				want += strings.ReplaceAll(w, "POL", pol) + "\n"
			}
			if code != 0 || errs != want {
				t.Errorf("%d\n got %q\nwant %q", code, errs, want)
			}
		})
	}
}
