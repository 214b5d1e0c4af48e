package capability_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestPrincipalValidate pins the one principal rule, the stricter of the
// two that session and policy used to apply: the tenant an identifier, the
// agent id valid UTF-8 without control characters or '"', the tier exactly
// T0–T4, and never its own parent.
func TestPrincipalValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    capability.Principal
		want string
	}{
		{"ok", capability.Principal{Tenant: "acme", Agent: "planner", Tier: skill.T3}, ""},
		{"ok sub-agent", capability.Principal{Tenant: "acme", Agent: "kid", Tier: skill.T4, Parent: "acme/planner"}, ""},
		{"ok agent with slash and unicode", capability.Principal{Tenant: "a.b_c-1", Agent: "team/é😀", Tier: skill.T0}, ""},
		{"no tenant", capability.Principal{Agent: "a", Tier: skill.T3}, "invalid principal: tenant is empty"},
		{"tenant with slash", capability.Principal{Tenant: "a/b", Agent: "a", Tier: skill.T3}, `invalid principal: tenant "a/b" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"tenant with quote", capability.Principal{Tenant: `a"b`, Agent: "a", Tier: skill.T3}, `invalid principal: tenant "a\"b" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"tenant with space", capability.Principal{Tenant: "a b", Agent: "a", Tier: skill.T3}, `invalid principal: tenant "a b" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"tenant too long", capability.Principal{Tenant: strings.Repeat("t", 65), Agent: "a", Tier: skill.T3}, `invalid principal: tenant "` + strings.Repeat("t", 65) + `" is longer than 64 characters`},
		{"no agent", capability.Principal{Tenant: "acme", Tier: skill.T3}, "invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT"},
		{"long agent", capability.Principal{Tenant: "acme", Agent: strings.Repeat("a", 129), Tier: skill.T3}, "invalid principal: agent id is 129 bytes, limit 128"},
		{"control in agent", capability.Principal{Tenant: "acme", Agent: "a\nb", Tier: skill.T3}, `invalid principal: agent id "a\nb" contains control characters or invalid UTF-8`},
		{"NUL in agent", capability.Principal{Tenant: "acme", Agent: "a\x00", Tier: skill.T3}, `invalid principal: agent id "a\x00" contains control characters or invalid UTF-8`},
		{"C1 control in agent", capability.Principal{Tenant: "acme", Agent: "a\u0085", Tier: skill.T3}, `invalid principal: agent id "a\u0085" contains control characters or invalid UTF-8`},
		{"invalid UTF-8 in agent", capability.Principal{Tenant: "acme", Agent: "a\xff", Tier: skill.T3}, `invalid principal: agent id "a\xff" contains control characters or invalid UTF-8`},
		{"U+FFFD in agent", capability.Principal{Tenant: "acme", Agent: "a\uFFFD", Tier: skill.T3}, `invalid principal: agent id "a�" contains control characters or invalid UTF-8`},
		{"quote in agent", capability.Principal{Tenant: "acme", Agent: `a"b`, Tier: skill.T3}, `invalid principal: agent id "a\"b" contains '"'`},
		{"bad tier", capability.Principal{Tenant: "acme", Agent: "a", Tier: "T9"}, `invalid principal: agent tier "T9": use one of T0, T1, T2, T3, T4`},
		{"non-canonical tier", capability.Principal{Tenant: "acme", Agent: "a", Tier: "t3"}, `invalid principal: agent tier "t3": use one of T0, T1, T2, T3, T4`},
		{"DEL in agent", capability.Principal{Tenant: "acme", Agent: "a\x7fb", Tier: skill.T3}, `invalid principal: agent id "a\x7fb" contains control characters or invalid UTF-8`},
		{"ESC in agent", capability.Principal{Tenant: "acme", Agent: "a\x1b[2Jb", Tier: skill.T3}, `invalid principal: agent id "a\x1b[2Jb" contains control characters or invalid UTF-8`},
		{"bidi override in agent", capability.Principal{Tenant: "acme", Agent: "a\u202eb", Tier: skill.T3}, `invalid principal: agent id "a\u202eb" contains a bidirectional formatting character (U+202E)`},
		{"bidi isolate in agent", capability.Principal{Tenant: "acme", Agent: "a\u2067b", Tier: skill.T3}, `invalid principal: agent id "a\u2067b" contains a bidirectional formatting character (U+2067)`},
		{"LRM in agent", capability.Principal{Tenant: "acme", Agent: "a\u200eb", Tier: skill.T3}, `invalid principal: agent id "a\u200eb" contains a bidirectional formatting character (U+200E)`},
		{"agent starting with slash", capability.Principal{Tenant: "acme", Agent: "/a", Tier: skill.T3}, `invalid principal: agent id "/a" has an empty segment: no '/' at its start or end, nor two in a row`},
		{"agent ending with slash", capability.Principal{Tenant: "acme", Agent: "a/", Tier: skill.T3}, `invalid principal: agent id "a/" has an empty segment: no '/' at its start or end, nor two in a row`},
		{"agent with double slash", capability.Principal{Tenant: "acme", Agent: "a//b", Tier: skill.T3}, `invalid principal: agent id "a//b" has an empty segment: no '/' at its start or end, nor two in a row`},
		{"parent without slash", capability.Principal{Tenant: "acme", Agent: "a", Tier: skill.T3, Parent: "lead"}, `invalid principal: parent "lead": write it as tenant/agent`},
		{"parent with NUL", capability.Principal{Tenant: "acme", Agent: "a", Tier: skill.T3, Parent: "acme/le\x00ad"}, `invalid principal: parent agent id "le\x00ad" contains control characters or invalid UTF-8`},
		{"parent with bad tenant", capability.Principal{Tenant: "acme", Agent: "a", Tier: skill.T3, Parent: "ac me/lead"}, `invalid principal: parent tenant "ac me" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"own parent", capability.Principal{Tenant: "acme", Agent: "a", Tier: skill.T3, Parent: "acme/a"}, "invalid principal: acme/a cannot be its own parent"},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, capability.ErrInvalidPrincipal) {
				t.Errorf("%s: %v does not wrap ErrInvalidPrincipal", tc.name, err)
			}
		}
		if got != tc.want {
			t.Errorf("%s: Validate() = %q; want %q", tc.name, got, tc.want)
		}
	}
}

// TestPrincipalIDAndPattern: ids and grant patterns are checked by the
// same field rules as Validate.
func TestPrincipalIDAndPattern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, id, pattern string }{
		{"acme/planner", "", ""},
		{"acme/team/alice", "", ""},
		{"acme/*", "", ""},
		{"*", `invalid principal: "*": write it as tenant/agent`, ""},
		{"*/reviewer", `invalid principal: tenant "*" must be letters, digits, '.', '_' and '-', starting with a letter or digit`, ""},
		{"acme", `invalid principal: "acme": write it as tenant/agent`, `invalid principal: "acme": write tenant/agent, or a pattern like acme/*`},
		{"acme/", "invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT", "invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT"},
		{"/x", "invalid principal: tenant is empty", "invalid principal: tenant is empty"},
		{"acme/x\x00y", `invalid principal: agent id "x\x00y" contains control characters or invalid UTF-8`, `invalid principal: agent id "x\x00y" contains control characters or invalid UTF-8`},
		{"acme/x\u202ey*", `invalid principal: agent id "x\u202ey*" contains a bidirectional formatting character (U+202E)`, `invalid principal: agent id "x\u202ey*" contains a bidirectional formatting character (U+202E)`},
		{"ac\tme/*", `invalid principal: tenant "ac\tme" must be letters, digits, '.', '_' and '-', starting with a letter or digit`, `invalid principal: tenant "ac\tme" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
	} {
		errText := func(err error) string {
			if err == nil {
				return ""
			}
			if !errors.Is(err, capability.ErrInvalidPrincipal) {
				t.Errorf("%q: %v does not wrap ErrInvalidPrincipal", tc.in, err)
			}
			return err.Error()
		}
		if _, _, err := capability.ParseID(tc.in); errText(err) != tc.id {
			t.Errorf("ParseID(%q) = %v; want %q", tc.in, err, tc.id)
		}
		if err := capability.ValidatePattern(tc.in); errText(err) != tc.pattern {
			t.Errorf("ValidatePattern(%q) = %v; want %q", tc.in, err, tc.pattern)
		}
	}
}

func TestPrincipalValidateAllocs(t *testing.T) {
	p := capability.Principal{Tenant: "acme", Agent: "planner-é", Tier: skill.T3, Parent: "acme/lead"}
	if n := testing.AllocsPerRun(100, func() { _ = p.Validate() }); n != 0 {
		t.Errorf("Validate of a valid principal allocates %v times; want 0", n)
	}
}

func TestRef(t *testing.T) {
	t.Parallel()
	r, err := capability.ParseRef("acme/notes:fs/write_file")
	if err != nil || r != (capability.Ref{Skill: "acme/notes", ExtensionID: "fs", CapabilityID: "write_file"}) {
		t.Fatalf("ParseRef = %+v, %v", r, err)
	}
	if r.String() != "acme/notes:fs/write_file" || r.Short() != "fs/write_file" {
		t.Errorf("String, Short = %q, %q", r.String(), r.Short())
	}
	for _, bad := range []struct{ in, want string }{
		{"fs/write_file", `invalid capability: capability "fs/write_file" does not name its skill (several skills may name a server "fs"): write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file`},
		{"notes:fs", `invalid capability: capability "notes:fs": write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file`},
		{"a:b:c/d", `invalid capability: capability "a:b:c/d": write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file`},
		{"a\x00:b/c", `invalid capability: skill key "a\x00": 1 to 256 characters without ':', '"' or control characters`},
	} {
		_, err := capability.ParseRef(bad.in)
		if err == nil || err.Error() != bad.want || !errors.Is(err, capability.ErrInvalidRef) {
			t.Errorf("ParseRef(%q) = %v; want %s", bad.in, err, bad.want)
		}
	}
}

func TestEffectValid(t *testing.T) {
	t.Parallel()
	for e, want := range map[capability.Effect]bool{"allow": true, "deny": true, "require_approval": true, "": false, "Allow": false, "permit": false} {
		if e.Valid() != want {
			t.Errorf("Effect(%q).Valid() = %t; want %t", e, !want, want)
		}
	}
}
