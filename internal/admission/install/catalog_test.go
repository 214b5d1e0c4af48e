package install_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// TestCatalogFollowsInstalls: the registry lists exactly the enabled
// installs after every change, and Recover brings it back in step after a
// change made by a process that did not sync it.
func TestCatalogFollowsInstalls(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, install.Options{})
	reg := registry.New(e.db, registry.Options{})
	e = openEnv(t, e.data, install.Options{Catalog: reg})
	listed := func() []string {
		t.Helper()
		es, err := reg.List(ctx, registry.Query{Scope: registry.ScopeImported})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range es {
			out = append(out, x.Key+"/"+x.Trust)
		}
		return out
	}
	src := writeSkill(t, t.TempDir(), "notes", "allowed-tools: s/echo\n---\nUse the tools.\n", map[string]any{"s": testServerDecl("normal", nil)})
	if _, err := e.svc.Install(ctx, src, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Approve(ctx, "notes", nil, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"approved", func() error { return nil }, nil},
		{"enabled", func() error { _, err := e.svc.Enable(ctx, "notes", "operator:ana"); return err }, []string{"notes/imported"}},
		{"disabled", func() error { _, err := e.svc.Disable(ctx, "notes", "operator:ana"); return err }, nil},
		{"enabled again", func() error { _, err := e.svc.Enable(ctx, "notes", "operator:ana"); return err }, []string{"notes/imported"}},
		{"disabled by a process that does not sync, then recovered", func() error {
			other := openEnv(t, e.data, install.Options{})
			if _, err := other.svc.Disable(ctx, "notes", "operator:ana"); err != nil {
				return err
			}
			if got := listed(); !reflect.DeepEqual(got, []string{"notes/imported"}) {
				t.Fatalf("before recovery: %v", got)
			}
			_, err := e.svc.Recover(ctx)
			return err
		}, nil},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := listed(); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("%s: listed %v, want %v", s.name, got, s.want)
		}
	}
}

// TestToolNamesFixedAtApproval: a tool name is given once, at approval,
// never to a second skill while the first holds it (enabled or disabled),
// never a name a first_party skill holds, and it is freed when its skill
// is removed.
func TestToolNamesFixedAtApproval(t *testing.T) {
	ctx := context.Background()
	held := map[string]string{"bare": "github (first_party)"}
	e := newEnv(t, install.Options{NamesHeld: func(context.Context) (map[string]string, error) { return held, nil }})
	approve := func(name, tools string) (string, string) {
		t.Helper()
		src := writeSkill(t, t.TempDir(), name, "allowed-tools: "+tools+"\n---\nUse the tools.\n", map[string]any{"s": testServerDecl("normal", nil)})
		if _, err := e.svc.Install(ctx, src, "operator:ana"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Complete(ctx, name, install.Completion{Capability: "s/bare", RiskLevel: "read", SideEffects: "none", DataEgress: "none", Why: "bare only answers ok; we read it"}, "operator:ana"); err != nil {
			t.Fatal(err)
		}
		r, err := e.svc.Approve(ctx, name, nil, "operator:ana")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range r.Approved.Capabilities {
			got = append(got, c.CapabilityID+"="+c.ToolName+" ("+c.ToolNameReason+")")
		}
		return got[0], got[len(got)-1]
	}
	tests := []struct {
		skill, before      string
		wantBare, wantEcho string
	}{
		{"first", "", "bare=first__bare (bare is taken by github (first_party))", "echo=echo ()"},
		{"second", "", "bare=second__bare (bare is taken by github (first_party))", "echo=second__echo (echo is taken by first)"},
		{"third", "disable first", "bare=third__bare (bare is taken by github (first_party))", "echo=third__echo (echo is taken by first)"},
		{"fourth", "remove first", "bare=fourth__bare (bare is taken by github (first_party))", "echo=echo ()"},
	}
	for _, tc := range tests {
		switch tc.before {
		case "disable first":
			if _, err := e.svc.Enable(ctx, "first", "operator:ana"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Disable(ctx, "first", "operator:ana"); err != nil {
				t.Fatal(err)
			}
		case "remove first":
			if _, err := e.svc.Remove(ctx, "first", "operator:ana"); err != nil {
				t.Fatal(err)
			}
		}
		bare, echo := approve(tc.skill, "s/bare s/echo")
		if bare != tc.wantBare || echo != tc.wantEcho {
			t.Errorf("%s: %s, %s\nwant %s, %s", tc.skill, bare, echo, tc.wantBare, tc.wantEcho)
		}
	}
}
