package executor_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

const ticketsCatalog = `apiVersion: skillgate.dev/v1
kind: ExecutorCatalog
providers:
  - {name: jira, suffix: _jira, description: Atlassian Jira}
  - {name: github, suffix: _github}
executors:
  - name: create_ticket
    description: Open a ticket in a project's tracker.
    inputSchema:
      type: object
      properties:
        project: {type: string, minLength: 1}
        summary: {type: string, minLength: 1}
      required: [project, summary]
      additionalProperties: false
`

// TestMergeOperatorCatalog: an operator catalog adds providers and
// executors over the built-in catalog; each conflict is refused naming
// the file, the entry, the field, the other declaration and the fix.
func TestMergeOperatorCatalog(t *testing.T) {
	cat, err := executor.Builtin().Merge("tickets.yaml", []byte(ticketsCatalog))
	if err != nil {
		t.Fatal(err)
	}
	if e := cat.Lookup("create_ticket"); e == nil || cat.Origin(executor.OriginExecutor, "create_ticket") != "tickets.yaml" ||
		cat.Origin(executor.OriginExecutor, "create_issue") != executor.BuiltinFile || cat.Origin(executor.OriginProvider, "github") != executor.BuiltinFile {
		t.Fatalf("merged: %v", e)
	}
	if _, ok := cat.Provider("jira"); !ok || executor.Builtin().Lookup("create_ticket") != nil {
		t.Fatal("jira not added, or the built-in catalog modified")
	}
	if base, prov, ok := cat.SplitProvider("create_ticket_jira"); !ok || base != "create_ticket" || prov != "jira" {
		t.Errorf("split: %s %s %v", base, prov, ok)
	}
	head := "apiVersion: skillgate.dev/v1\nkind: ExecutorCatalog\n"
	for _, tc := range []struct{ name, file, want string }{
		{"redefined executor", head + "executors:\n  - {name: create_issue, description: d, inputSchema: {type: object}}\n",
			"invalid executor catalog: ops.yaml: executor create_issue: name: executor/builtin.yaml already declares it; an operator catalog adds executors and never redefines one: remove it from ops.yaml or name another object"},
		{"other suffix", head + "providers:\n  - {name: gitlab, suffix: _gl}\n",
			`invalid executor catalog: ops.yaml: provider gitlab: suffix "_gl": executor/builtin.yaml declares provider gitlab with suffix "_gitlab"; write suffix: _gitlab or name the provider otherwise`},
		{"suffix taken", head + "providers:\n  - {name: gh-enterprise, suffix: _github}\n",
			`invalid executor catalog: ops.yaml: provider gh-enterprise: suffix "_github" is already provider github's (declared in executor/builtin.yaml); choose another suffix`},
		{"suffixed executor", head + "executors:\n  - {name: find_tickets_gitlab, description: d, inputSchema: {type: object}}\n",
			"invalid executor catalog: ops.yaml: executor find_tickets_gitlab: name: it carries provider gitlab's suffix; an executor is provider-neutral: name it find_tickets and declare a backend per provider"},
		{"schema: verb", head + "executors:\n  - {name: get_ticket, description: d, inputSchema: {type: object}}\n",
			"invalid executor catalog: ops.yaml: does not match docs/schemas/executor-catalog.v1.json: at /executors/0/name: '" + `get_ticket' does not match pattern '^(find|list|read|create|update|write|delete|send)_[a-z][a-z0-9]*(_[a-z][a-z0-9]*)*$'`},
		{"schema: unknown field", head + "executors:\n  - {name: read_ticket, description: d, inputSchema: {type: object}, owner: me}\n",
			"invalid executor catalog: ops.yaml: does not match docs/schemas/executor-catalog.v1.json: at /executors/0: additional properties 'owner' not allowed"},
		{"version", "apiVersion: skillgate.dev/v2\nkind: ExecutorCatalog\n",
			"invalid executor catalog: ops.yaml: does not match docs/schemas/executor-catalog.v1.json: at /apiVersion: value must be 'skillgate.dev/v1'"},
	} {
		_, err := cat.Merge("ops.yaml", []byte(tc.file))
		if err == nil || err.Error() != tc.want || !errors.Is(err, executor.ErrInvalidCatalog) {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// A provider repeated with its suffix is no conflict.
	if _, err := cat.Merge("again.yaml", []byte(head+"providers:\n  - {name: jira, suffix: _jira}\n")); err != nil {
		t.Errorf("repeated provider: %v", err)
	}
}

// TestLoadCatalogDir: the files of a directory merge in name order; a
// refused one is left out with its error, the others load.
func TestLoadCatalogDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10-tickets.yaml", ticketsCatalog)
	write("20-again.yaml", ticketsCatalog) // redefines create_ticket
	write("notes.txt", "not a catalog")
	cat, files, err := executor.LoadCatalogDir(executor.Builtin(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Err != nil || !slices.Equal(files[0].Executors, []string{"create_ticket"}) || !slices.Equal(files[0].Providers, []string{"jira"}) ||
		files[1].Err == nil || files[1].Err.Error() != "invalid executor catalog: 20-again.yaml: executor create_ticket: name: 10-tickets.yaml already declares it; an operator catalog adds executors and never redefines one: remove it from 20-again.yaml or name another object" {
		t.Fatalf("files %+v", files)
	}
	if cat.Lookup("create_ticket") == nil || len(files[0].Digest) != len("sha256:")+64 {
		t.Errorf("create_ticket not loaded, digest %q", files[0].Digest)
	}
	fp := executor.CatalogFingerprint(files)
	write("10-tickets.yaml", ticketsCatalog+"\n")
	if _, again, _ := executor.LoadCatalogDir(executor.Builtin(), dir); executor.CatalogFingerprint(again) == fp {
		t.Error("the fingerprint did not move with the file")
	}
	if c, fs, err := executor.LoadCatalogDir(executor.Builtin(), filepath.Join(dir, "none")); err != nil || c != executor.Builtin() || fs != nil {
		t.Errorf("missing directory: %v %v", fs, err)
	}
}

// TestEmbeddedSchemaIsPublished: the schema operator catalogs are
// validated against is docs/schemas/executor-catalog.v1.json.
func TestEmbeddedSchemaIsPublished(t *testing.T) {
	a, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schemas", "executor-catalog.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("executor-catalog.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("internal/decision/executor/executor-catalog.v1.json differs from docs/schemas/executor-catalog.v1.json: copy it")
	}
}
