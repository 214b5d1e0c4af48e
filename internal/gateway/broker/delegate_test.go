package broker_test

import (
	"context"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestDelegateRefusesMalformedPrincipals: a sub-agent's parent (from
// --parent or the REST API) must be a well-formed principal.
func TestDelegateRefusesMalformedPrincipals(t *testing.T) {
	eng := policy.New(&policy.Options{})
	if err := eng.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := broker.NewPolicyDecider(eng)
	kid := capability.Principal{Tenant: "acme", Agent: "kid", Tier: "T3"}
	tests := []struct {
		parent capability.Principal
		want   string
	}{
		{capability.Principal{Tenant: "..", Agent: "lead", Tier: "T2"},
			`parent ../lead: invalid principal: tenant ".." must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{capability.Principal{Tenant: "a b", Agent: "c", Tier: "T2"},
			`parent a b/c: invalid principal: tenant "a b" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{capability.Principal{Tenant: "acme", Agent: "lead\x00", Tier: "T2"},
			"parent acme/lead\x00: invalid principal: agent id \"lead\\x00\" contains control characters or invalid UTF-8"},
		{capability.Principal{Tenant: "acme", Agent: "lead", Tier: "T9"},
			`parent acme/lead: invalid principal: agent tier "T9": use one of T0, T1, T2, T3, T4`},
	}
	for _, tt := range tests {
		_, err := d.Delegate(tt.parent, kid, nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Delegate(%q/%q):\n got %v\nwant %s", tt.parent.Tenant, tt.parent.Agent, err, tt.want)
		}
	}
	if _, err := d.Delegate(capability.Principal{Tenant: "acme", Agent: "lead", Tier: "T2"}, kid, nil); err != nil {
		t.Errorf("well-formed parent: %v", err)
	}
}
