package app

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// The readings of the CLI's values that are more than a flag: times,
// argument patterns, script allowances, policy texts. Each returns a
// UsageError when the value is wrong, so the CLI exits 2.

// ParseExpiry reads a grant's expiry (--expires): a duration from now
// (policy.ParseDuration: "2h", "7d") or an RFC 3339 time; nil for "".
func ParseExpiry(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if d, err := policy.ParseDuration(s); err == nil {
		t := now.Add(d)
		return &t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, Usagef("--expires %q: a duration (30m, 2h, 7d) or an RFC 3339 time (2026-12-31T18:00:00Z)", s)
	}
	return &t, nil
}

// ParseGrantArgs reads a grant's argument patterns (--args): {"name":
// ["value", "pattern*"]}, where a single string stands for a one-element
// list; nil for "".
func ParseGrantArgs(s string) (map[string][]string, error) {
	if s == "" {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil || raw == nil {
		return nil, Usagef(`--args: a JSON object of argument patterns, like '{"path":["/srv/*"]}'`)
	}
	out := map[string][]string{}
	for k, v := range raw {
		var one string
		if json.Unmarshal(v, &one) == nil {
			out[k] = []string{one}
			continue
		}
		var list []string
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, Usagef("--args: %s must be a string or an array of strings", k)
		}
		out[k] = list
	}
	return out, nil
}

// ParseWhen reads an RFC 3339 time or a duration ago, written as for
// grant expiries (policy.ParseDuration: 90m, 7d); the zero time for "".
// Its error is plain: the caller names the flag.
func ParseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := policy.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-11-22T10:00:00Z) nor a duration ago (90m, 7d)", s)
	}
	return t, nil
}

// AllowScripts returns the packages whose install scripts the operator
// allows (--allow-scripts), each with the reason given (--why), or a
// usage error when one is given without the other.
func AllowScripts(names []string, why string) (map[string]string, error) {
	if len(names) == 0 {
		if why != "" {
			return nil, Usagef("--why goes with --allow-scripts: name the packages whose install scripts may run")
		}
		return nil, nil
	}
	if why == "" {
		return nil, Usagef("--allow-scripts needs --why: say why the package needs its install scripts (recorded and audited)")
	}
	out := map[string]string{}
	for _, n := range names {
		out[n] = why
	}
	return out, nil
}

// ReadPolicyText reads the Cedar text 'policy put' stores: from file, or
// from stdin (os.Stdin when nil) when file is "-", refusing more than
// MaxStoredPolicy bytes.
func ReadPolicyText(file string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, Usagef("%v", err)
		}
		defer f.Close()
		r = f
	} else if r == nil {
		r = os.Stdin
	}
	text, err := io.ReadAll(io.LimitReader(r, MaxStoredPolicy+1))
	if err != nil {
		return nil, err
	}
	if len(text) > MaxStoredPolicy {
		return nil, Usagef("%s: larger than %d bytes; split it", file, MaxStoredPolicy)
	}
	return text, nil
}

// ListQuery checks the filters of 'skillgate ls' given in q and adds the
// pool of the agent tier invokableBy (T0–T4; empty: any) and, with all,
// disabled, rejected and shadowed skills. A bad filter is a usage error
// naming its flag.
func ListQuery(q registry.Query, invokableBy string, all bool) (registry.Query, error) {
	if q.Tenant != "" {
		if err := capability.CheckID("tenant", q.Tenant); err != nil {
			return q, Usagef("--tenant: %v", err)
		}
	}
	if q.Tier < 0 || q.Tier > 3 {
		return q, Usagef("--tier must be 1, 2 or 3")
	}
	if q.Trust != "" && !capability.Trust(q.Trust).Valid() {
		return q, Usagef("--trust %q: use core, first_party or imported", q.Trust)
	}
	if invokableBy != "" {
		t, err := skill.ParseAgentTier(invokableBy)
		if err != nil {
			return q, Usagef("--invokable-by: %v", err)
		}
		q.AgentTier = t
	}
	if all {
		q.Disabled, q.Rejected, q.Shadowed = true, true, true
	}
	return q, nil
}

// PolicyTestPrincipal reads the principal and arguments of 'skillgate
// policy test': principal (Agent::"tenant/agent", tenant/agent or an
// agent id), the agent tier, the parent of a sub-agent and the arguments
// as a JSON object. A malformed one is a usage error naming its flag.
func PolicyTestPrincipal(principal, tier, parent, argsJSON string) (capability.Principal, map[string]any, error) {
	tenant, agent, err := policy.ParsePrincipalID(principal)
	if err != nil {
		return capability.Principal{}, nil, Usagef("--principal: %v", err)
	}
	t, err := TierFlag("--tier", tier)
	if err != nil {
		return capability.Principal{}, nil, err
	}
	args := map[string]any{}
	if argsJSON != "" {
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil || args == nil {
			return capability.Principal{}, nil, Usagef("--args: a JSON object, like '{\"path\":\"/srv/a\"}'")
		}
	}
	return capability.Principal{Tenant: tenant, Agent: agent, Tier: t, Parent: parent}, args, nil
}

// GrantFlags reads the grant of 'skillgate grant add': g with the expiry
// (a duration from now or an RFC 3339 time) and the argument patterns (a
// JSON object) given as flags, made by by or else $USER. A malformed one
// is a usage error.
func GrantFlags(g policy.Grant, expires, argsJSON, by string, getenv func(string) string) (policy.Grant, error) {
	exp, err := ParseExpiry(expires, time.Now())
	if err != nil {
		return g, err
	}
	ga, err := ParseGrantArgs(argsJSON)
	if err != nil {
		return g, err
	}
	if by == "" {
		by = getenv("USER")
	}
	g.ExpiresAt, g.Args, g.CreatedBy = exp, ga, by
	return g, nil
}
