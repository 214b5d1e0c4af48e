package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// tenancyCase is how the matrix calls one operation of the document: on
// tenant acme's data where the operation touches a tenant's.
type tenancyCase struct {
	path, body string
	// other says what a T1 token of another tenant gets from a route of
	// access "tenant": "refused" (403) or "filtered" (200, a list of
	// grants of its own tenant only).
	other string
}

// tenancyCases has a case for every operation of the document: an
// operation without one fails the matrix, so a new route cannot escape it.
var tenancyCases = map[string]tenancyCase{
	"GET /v1/health":           {path: "/v1/health"},
	"GET /v1/ready":            {path: "/v1/ready"},
	"GET /v1/openapi.json":     {path: "/v1/openapi.json"},
	"POST /v1/scan":            {path: "/v1/scan"},
	"GET /v1/installs":         {path: "/v1/installs"},
	"GET /v1/installs/pending": {path: "/v1/installs/pending"},
	"GET /v1/installs/review":  {path: "/v1/installs/review?name=absent"},
	"POST /v1/installs":        {path: "/v1/installs", body: `{"path":""}`},
	"GET /v1/grants":           {path: "/v1/grants", other: "filtered"},
	"POST /v1/grants":          {path: "/v1/grants", body: `{"principal":"acme/drafter","capability":"nosuch","reason":"x"}`},
	"DELETE /v1/grants/{id}":   {path: "/v1/grants/g-absent"},
	"POST /v1/policy/test": {path: "/v1/policy/test", other: "refused",
		body: `{"principal":"acme/drafter","tier":"T3","capability":"tools/fs:fs/delete_file","args":{"path":"/tmp/x"}}`},
	"GET /v1/changes":      {path: "/v1/changes"},
	"GET /v1/changes/show": {path: "/v1/changes/show?id=9"},
}

func init() {
	for _, op := range []string{"approve", "reject"} {
		tenancyCases["POST /v1/changes/"+op] = tenancyCase{path: "/v1/changes/" + op, body: `{"id":"9","why":"a reason long enough"}`}
	}
	for _, op := range []string{"complete", "approve", "reject", "suppress", "enable", "disable", "remove", "recheck"} {
		tenancyCases["POST /v1/installs/"+op] = tenancyCase{path: "/v1/installs/" + op, body: `{"name":"absent"}`}
	}
}

// TestTenancyMatrix calls every operation of the REST API's document with
// a token of every tier (T0–T4) of two tenants, acme (whose data the
// requests name) and beta, and checks each answer against the access the
// document declares for the operation (x-skillgate-access): public routes
// answer everyone; server routes T0 and T1; operator routes T0 only;
// tenant routes T0 for any tenant and T1 for its own only: beta's T1 is
// refused a policy replay for acme's agent and lists beta's grants only
// (no argument or reason of acme's). Refusals are 403 with the message
// naming the tiers or the tenant.
func TestTenancyMatrix(t *testing.T) {
	o := newOpenAPIFixture(t)
	type caller struct {
		p      capability.Principal
		secret string
	}
	var callers []caller
	for _, tenant := range []string{"acme", "beta"} {
		for _, tier := range skill.AllAgentTiers {
			p := capability.Principal{Tenant: tenant, Agent: "m-" + string(tier), Tier: tier}
			secret, _, err := server.AddToken(o.tokens, p, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			callers = append(callers, caller{p, secret})
		}
	}
	// Grants of acme (with arguments and a reason), of beta, and one over
	// every tenant.
	for _, g := range []string{
		`{"principal":"acme/drafter","capability":"tools/fs:fs/delete_file","args":{"path":["/srv/acme/secret"]},"reason":"acme's own reason"}`,
		`{"principal":"beta/x","capability":"tools/fs:fs/delete_file","reason":"beta's reason"}`,
		`{"principal":"*/reviewer","capability":"tools/fs:fs/delete_file","reason":"every tenant's reviewers"}`,
	} {
		if status, body := o.do(t, "POST", "/v1/grants", o.human, g); status != 200 {
			t.Fatalf("seed grant: %d %s", status, body)
		}
	}
	var ops []string
	access := map[string]string{}
	for p, item := range o.doc["paths"].(map[string]any) {
		for m, op := range item.(map[string]any) {
			key := strings.ToUpper(m) + " " + p
			ops = append(ops, key)
			a, _ := op.(map[string]any)["x-skillgate-access"].(string)
			access[key] = a
		}
	}
	sort.Strings(ops)
	if len(ops) < 20 {
		t.Fatalf("only %d operations in the document", len(ops))
	}
	for _, key := range ops {
		tc, ok := tenancyCases[key]
		if !ok {
			t.Errorf("%s has no case in tenancyCases: add one (on tenant acme's data)", key)
			continue
		}
		method := strings.SplitN(key, " ", 2)[0]
		a := capability.Access(access[key])
		if !slices.Contains([]capability.Access{capability.AccessPublic, capability.AccessServer, capability.AccessTenant, capability.AccessOperator}, a) {
			t.Errorf("%s: x-skillgate-access %q", key, a)
			continue
		}
		if a == capability.AccessTenant && tc.other == "" {
			t.Errorf("%s is a tenant route: its case must say what another tenant's T1 gets", key)
		}
		for _, c := range callers {
			status, body := o.do(t, method, tc.path, c.secret, tc.body)
			route := method + " " + strings.SplitN(tc.path, "?", 2)[0]
			var want string // a refusal's message; "" when admitted
			switch tiers := a.Tiers(); {
			case tiers != nil && !slices.Contains(tiers, c.p.Tier) && len(tiers) == 1:
				want = fmt.Sprintf("forbidden: this needs a token of agent tier T0 (a human operator); this token is %s (%s)", c.p, route)
			case tiers != nil && !slices.Contains(tiers, c.p.Tier):
				want = fmt.Sprintf("forbidden: this needs a token of agent tier T0 or T1; this token is %s (%s)", c.p, route)
			case a == capability.AccessTenant && c.p.Tier == skill.T1 && c.p.Tenant != "acme" && tc.other == "refused":
				want = "forbidden: tenant acme: a T1 token reaches its own tenant (beta) only"
			}
			if want != "" {
				var e struct{ Error string }
				if json.Unmarshal(body, &e); status != http.StatusForbidden || e.Error != want {
					t.Errorf("%s as %s: %d %s\n want 403 %q", key, c.p, status, body, want)
				}
				continue
			}
			if status == http.StatusUnauthorized || status == http.StatusForbidden {
				t.Errorf("%s as %s: %d %s; want it admitted", key, c.p, status, body)
				continue
			}
			if key == "GET /v1/grants" {
				var gs []policy.Grant
				if err := json.Unmarshal(body, &gs); err != nil {
					t.Fatalf("%s as %s: %v: %s", key, c.p, err, body)
				}
				var got []string
				for _, g := range gs {
					got = append(got, g.Principal)
				}
				want := []string{"acme/drafter", "beta/x", "*/reviewer"}
				if c.p.Tier == skill.T1 {
					want = []string{c.p.Tenant + "/" + map[string]string{"acme": "drafter", "beta": "x"}[c.p.Tenant]}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s as %s: grants of %v; want %v", key, c.p, got, want)
				}
				if c.p.Tenant != "acme" && c.p.Tier != skill.T0 && (strings.Contains(string(body), "acme/drafter") || strings.Contains(string(body), "/srv/acme/secret") || strings.Contains(string(body), "acme's own reason")) {
					t.Errorf("%s as %s: acme's grant shows: %s", key, c.p, body)
				}
			}
		}
	}
}
