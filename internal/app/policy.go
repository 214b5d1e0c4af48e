package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
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
	caps, err := a.checkCapabilities(ctx, capsFile)
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
	src, err := a.capabilitySource(capsFile)
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
	if err := e.LoadCapabilities(ctx, a.installedCapabilities()); err != nil {
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

// PolicyDir is where policy files live: DATA/policies.
func (a *App) PolicyDir() string { return filepath.Join(a.Data(), "policies") }

// OpenPolicy opens the store and an engine over it with the policies and
// grants loaded.
func (a *App) OpenPolicy(ctx context.Context) (*policy.Engine, store.DB, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	e := policy.New(&policy.Options{Store: db, Buckets: db, PolicyDir: a.PolicyDir(), Logger: a.log})
	if err := e.Reload(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return e, db, nil
}

// capabilitySource is where `policy test` gets the registry's capability
// records: the --capabilities file when given, else the enabled installed
// skills, exactly as the gateway projects them.
func (a *App) capabilitySource(file string) (policy.CapabilitySource, error) {
	if file == "" {
		return installedCapabilities{a}, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var caps policy.Capabilities
	if err := strictjson.Decode(b, &caps, 16); err != nil {
		return nil, Usagef("--capabilities %s: %v (a JSON array of capability records; see docs/policy.md)", file, err)
	}
	return caps, nil
}

// checkCapabilities are the capabilities `policy check` checks argument
// reads against: the --capabilities file, else the installed skills' when
// the data directory holds a registry, else none.
func (a *App) checkCapabilities(ctx context.Context, file string) ([]policy.Capability, error) {
	if file == "" {
		if !a.storeExists() {
			return nil, nil
		}
	}
	src, err := a.capabilitySource(file)
	if err != nil {
		return nil, err
	}
	return src.Capabilities(ctx)
}

// installedCapabilities reads the capabilities the gateway serves: those
// of the first_party skills and of the enabled installed skills.
type installedCapabilities struct{ a *App }

// Capabilities implements policy.CapabilitySource.
func (ic installedCapabilities) Capabilities(ctx context.Context) ([]policy.Capability, error) {
	svc, closeFn, err := ic.a.OpenInstalls(ctx)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	reg, closeReg, err := ic.a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return nil, err
	}
	defer closeReg()
	skills, err := broker.LoadAll(broker.LoadFirstParty(reg, nil), broker.LoadInstalled(svc))(ctx)
	if err != nil {
		return nil, err
	}
	return broker.PolicyCapabilities(skills), nil
}

// auditPolicy records a stored policy's change.
func (a *App) auditPolicy(ctx context.Context, db store.DB, action, id string, size int) error {
	data, _ := json.Marshal(map[string]any{"bytes": size})
	_, err := audit.NewLog(db).Append(ctx, audit.Record{Time: time.Now(), Actor: a.Actor(), Action: action, Subject: "policy:" + id, Data: data})
	if err != nil {
		return fmt.Errorf("audit of %s %s: %w", action, id, err)
	}
	return nil
}

// replacing is the store's policies with p put in (as PutPolicy would).
type replacing struct {
	db store.DB
	p  store.StoredPolicy
}

// Policies implements policy.PolicyStore with p put in.
func (r replacing) Policies(ctx context.Context) ([]store.StoredPolicy, error) {
	ps, err := r.db.Policies(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]store.StoredPolicy, 0, len(ps)+1)
	added := false
	for _, p := range ps {
		if p.ID == r.p.ID {
			p, added = r.p, true
		} else if !added && p.ID > r.p.ID {
			out, added = append(out, r.p), true
		}
		out = append(out, p)
	}
	if !added {
		out = append(out, r.p)
	}
	return out, nil
}

// MaxStoredPolicy bounds the text of one stored policy, as a policy file
// is bounded.
const MaxStoredPolicy = policy.MaxPolicyFileBytes

// CheckPolicyID accepts the ids of stored policies: letters, digits, '-',
// '_' and '.', at most 128 bytes; others are usage errors.
func CheckPolicyID(id string) error {
	if id == "" || len(id) > 128 {
		return Usagef("policy id %q: 1 to 128 letters, digits, '-', '_' or '.'", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return Usagef("policy id %q: 1 to 128 letters, digits, '-', '_' or '.'", id)
		}
	}
	return nil
}

// PutPolicy stores the Cedar text under id in the metadata store,
// replacing what id held, once the policy set it joins (DATA/policies and
// every stored text) loads as the gateway loads it; the change is
// audited. It returns the number of policies in the set.
func (a *App) PutPolicy(ctx context.Context, id string, text []byte) (int, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	set, err := policy.LoadPolicies(ctx, a.PolicyDir(), replacing{db, store.StoredPolicy{ID: id, Text: string(text)}})
	if err != nil {
		return 0, fmt.Errorf("policy %s refused, nothing stored: %w", id, err)
	}
	if err := db.PutPolicy(ctx, store.StoredPolicy{ID: id, Text: string(text)}); err != nil {
		return 0, err
	}
	if err := a.auditPolicy(ctx, db, "policy.put", id, len(text)); err != nil {
		return 0, err
	}
	return set.Len(), nil
}

// RemovePolicy removes the text stored under id, audited; an id that
// holds none is an error.
func (a *App) RemovePolicy(ctx context.Context, id string) error {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	ps, err := db.Policies(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, p := range ps {
		found = found || p.ID == id
	}
	if !found {
		return fmt.Errorf("no stored policy %q (list them with 'skillgate policy ls')", id)
	}
	if err := db.DeletePolicy(ctx, id); err != nil {
		return err
	}
	return a.auditPolicy(ctx, db, "policy.remove", id, 0)
}

// installedCapabilities reads the capabilities the gateway serves: those
// of the first_party skills and of the enabled installed skills.
func (a *App) installedCapabilities() policy.CapabilitySource { return installedCapabilities{a} }

// Grants lists the grants that are not revoked.
func (a *App) Grants(ctx context.Context) ([]policy.Grant, error) {
	e, db, err := a.OpenPolicy(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return e.Grants(), nil
}

// RevokeGrant revokes the grant id (policy.ErrGrantNotFound when there is
// none), audited as the operator's.
func (a *App) RevokeGrant(ctx context.Context, id string) error {
	e, db, err := a.OpenPolicy(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	return e.RevokeGrant(ctx, id, a.Actor())
}

// StoredPolicies lists the policy texts kept in the metadata store; never
// nil.
func (a *App) StoredPolicies(ctx context.Context) ([]store.StoredPolicy, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ps, err := db.Policies(ctx)
	if ps == nil && err == nil {
		ps = []store.StoredPolicy{}
	}
	return ps, err
}
