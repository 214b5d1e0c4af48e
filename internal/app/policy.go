package app

import (
	"context"
	"errors"
	"strings"

	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/policy"
)

// CheckReport is the JSON of `skillgate policy check --json`.
type CheckReport struct {
	OK       bool             `json:"ok"`
	Default  bool             `json:"default,omitempty"`
	Sources  []string         `json:"sources"`
	Policies []*policy.Policy `json:"policies"`
	Errors   []string         `json:"errors"`
	// Warnings are schema findings that do not make the set invalid.
	Warnings []string `json:"warnings"`
	// Findings are the schema and argument findings (errors and
	// warnings) as data: position, policy, severity, message and, for
	// argument reads, the capabilities affected.
	Findings []policy.Finding `json:"findings"`
}

// CheckPolicies checks the policy files given, or without files the set
// skillgate would load (DATA/policies/*.cedar and the stored policies):
// syntax, Cedar's validator, and reads of call arguments and constraints
// against the capabilities of capsFile, else of the installed skills when
// the data directory holds a registry. An invalid set is a report with
// errors, not an error.
func (a *App) CheckPolicies(ctx context.Context, files []string, capsFile string) (*CheckReport, error) {
	var sources []policy.Source
	if len(files) > 0 {
		for _, f := range files {
			src, err := policy.ReadPolicyFile(f)
			if err != nil {
				return nil, err
			}
			sources = append(sources, src)
		}
	} else {
		dir, err := policy.ReadPolicyDir(a.PolicyDir())
		if err != nil {
			return nil, err
		}
		sources = dir
		db, err := a.OpenStore(ctx)
		if err != nil {
			return nil, err
		}
		stored, err := db.Policies(ctx)
		db.Close()
		if err != nil {
			return nil, err
		}
		for _, p := range stored {
			sources = append(sources, policy.Source{Name: "store:" + p.ID, Text: []byte(p.Text)})
		}
	}
	rep := &CheckReport{Sources: []string{}, Policies: []*policy.Policy{}, Errors: []string{}, Warnings: []string{}, Findings: []policy.Finding{}}
	for _, s := range sources {
		rep.Sources = append(rep.Sources, s.Name)
	}
	var set *policy.PolicySet
	var err error
	if len(sources) == 0 {
		set, rep.Default = policy.DefaultPolicies(), true
	} else {
		set, err = policy.ParsePolicies(sources)
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			rep.Errors = append(rep.Errors, strings.TrimPrefix(line, policy.ErrInvalidPolicy.Error()+": "))
		}
		return rep, nil
	}
	caps, err := a.CheckCapabilities(ctx, capsFile)
	if err != nil {
		return nil, err
	}
	findings := append(policy.ValidatePolicies(set), policy.ValidateArguments(set, caps)...)
	findings = append(findings, policy.ValidateConstraints(set, caps)...)
	rep.Findings = append(rep.Findings, findings...)
	for _, f := range findings {
		if f.Severity == policy.SeverityError {
			rep.Errors = append(rep.Errors, f.String())
		} else {
			rep.Warnings = append(rep.Warnings, f.String())
		}
	}
	rep.OK = len(rep.Errors) == 0
	if rep.OK {
		rep.Policies = set.Policies()
	}
	return rep, nil
}

// TestPolicy decides a call of the capability capName by p with args as
// the gateway would, without side effects, against the policy engine and
// the capabilities of capsFile (else the installed skills). grant is the
// command that approves one such call when the decision needs approval.
func (a *App) TestPolicy(ctx context.Context, p capability.Principal, capName string, args map[string]any, capsFile string) (rep policy.TestReport, grant string, err error) {
	src, err := a.CapabilitySource(capsFile)
	if err != nil {
		return rep, "", err
	}
	e, db, err := a.OpenPolicy(ctx)
	if err != nil {
		return rep, "", err
	}
	defer db.Close()
	if err := e.LoadCapabilities(ctx, src); err != nil {
		return rep, "", err
	}
	ref, err := e.ResolveCapability(capName)
	if err != nil {
		return rep, "", Usagef("--capability: %v", err)
	}
	rep = policy.TestReport{Principal: p, Capability: ref.String(), Args: args, Decision: e.Test(ctx, p, ref, args)}
	if cmd, ok := e.GrantCommand(p, ref); ok && rep.Effect == capability.RequireApproval {
		grant = cmd
	}
	return rep, grant, nil
}

// AddGrant stores g once its capability is bound to the installed skill
// offering it (the short form server/tool is resolved); an invalid grant
// or an ambiguous capability is a usage error.
func (a *App) AddGrant(ctx context.Context, g policy.Grant) (policy.Grant, error) {
	e, db, err := a.OpenPolicy(ctx)
	if err != nil {
		return g, err
	}
	defer db.Close()
	// The installed skills' capabilities: a grant must match one, and the
	// short form is bound to the one skill offering it.
	if err := e.LoadCapabilities(ctx, a.InstalledCapabilities()); err != nil {
		return g, err
	}
	if g.Capability != "*" && !strings.Contains(g.Capability, ":") {
		if g.Capability, err = e.ResolveGrantCapability(g.Capability); err != nil {
			return g, Usagef("%v", err)
		}
	}
	added, err := e.AddGrant(ctx, g)
	if errors.Is(err, policy.ErrInvalidGrant) {
		return added, Usagef("%v", err)
	}
	return added, err
}
