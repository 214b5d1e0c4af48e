package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// inactiveProviders returns the installed skills with a backends file
// that the gateway does not serve (not enabled, or not approved), with why.
func inactiveProviders(ctx context.Context, svc *install.Service) ([]broker.InactiveSkill, error) {
	all, err := svc.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []broker.InactiveSkill
	seen := map[string]bool{}
	for _, s := range all { // newest first: the newest install of each skill
		if seen[s.Key] || s.State == store.StateEnabled || s.State == store.StateRemoved || s.State == store.StateRejected {
			seen[s.Key] = true
			continue
		}
		seen[s.Key] = true
		r, err := svc.Review(ctx, s.Key)
		if err != nil {
			return nil, err
		}
		data, err := broker.ReadBackends(filepath.Join(r.Dir, install.SkillDir))
		if err != nil || data == nil {
			continue
		}
		off := executor.Off{Code: executor.OffSkillDisabled, Detail: fmt.Sprintf("skill %s is %s; enable it with skillgate enable %s", s.Key, s.State, s.Key)}
		switch s.State {
		case store.StateInstalled, store.StateDisabled:
		default:
			off = executor.Off{Code: executor.OffNotApproved, Detail: fmt.Sprintf("skill %s is %s; see skillgate review %s", s.Key, s.State, s.Key)}
		}
		out = append(out, broker.InactiveSkill{Key: s.Key, Backends: data, Off: off})
	}
	return out, nil
}

// noUpstream is the upstream of a broker that only reports: it never
// calls a server.
type noUpstream struct{}

// Call implements broker.Caller by refusing.
func (noUpstream) Call(_ context.Context, _ capability.Principal, _ mcpclient.Target, _ string, _ json.RawMessage, done mcpclient.ResultFunc) {
	done(nil, errors.New("skillgate executors does not call servers"))
}

// Retain implements broker.Caller.
func (noUpstream) Retain(map[string]bool) {}

// ExecutorStatus reports every provider-neutral executor for p as the
// gateway would serve it (live or dormant, each backend live or off and
// why), with the problems that refused mappings: the configuration's
// executor options, credentials resolved as the gateway resolves them, the
// policy engine, and the installed skills, without calling any server.
func (a *App) ExecutorStatus(ctx context.Context, p capability.Principal) ([]executor.ExecutorStatus, []string, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, nil, err
	}
	opts, err := executorOptions(cfg, a.executorCatalog())
	if err != nil {
		return nil, nil, err
	}
	opts.Catalog = a.executorCatalog()
	// Credentials as the gateway resolves them: the principal's agent,
	// then tenant entry of the credential store, then skillgate's
	// environment.
	creds, err := a.OpenCredentials(ctx)
	if err != nil {
		return nil, nil, err
	}
	check := broker.CredentialsOf(creds)
	opts.Credentials = func(p capability.Principal, names []string) []string { return check(ctx, p, "", names) }
	eng, db, err := a.OpenPolicy(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	opts.Registered = db.Registrations
	svc, closeInstalls, err := a.OpenInstalls(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer closeInstalls()
	// The skills the gateway serves: the first_party ones, then the
	// enabled installs (as serve and mcp load them).
	reg := registry.New(db, registry.Options{Logger: a.log})
	load := broker.LoadAll(broker.LoadFirstParty(reg, a.log), broker.LoadInstalled(svc))
	b, err := broker.New(broker.Options{Load: load, Decider: broker.NewPolicyDecider(eng), Upstream: noUpstream{}, Executors: opts})
	if err != nil {
		return nil, nil, err
	}
	if err := b.Reload(ctx); err != nil {
		return nil, nil, err
	}
	inactive, err := inactiveProviders(ctx, svc)
	if err != nil {
		return nil, nil, err
	}
	disabled, err := disabledFirstParty(ctx, reg)
	if err != nil {
		return nil, nil, err
	}
	inactive = append(disabled, inactive...)
	return b.ExecutorStatus(p, inactive...), b.ExecutorProblems(), nil
}

// ExecutorReport is what 'skillgate executors --json' prints: the
// principal, every executor's status and the problems found.
type ExecutorReport struct {
	Principal string                    `json:"principal"`
	Executors []executor.ExecutorStatus `json:"executors"`
	Problems  []string                  `json:"problems"`
	p         capability.Principal
}

// Executors is [App.ExecutorStatus] as a report; Problems is never nil.
func (a *App) Executors(ctx context.Context, p capability.Principal) (*ExecutorReport, error) {
	st, problems, err := a.ExecutorStatus(ctx, p)
	if err != nil {
		return nil, err
	}
	if problems == nil {
		problems = []string{}
	}
	return &ExecutorReport{Principal: p.String(), Executors: st, Problems: problems, p: p}, nil
}

// WriteJSON writes the report as JSON indented by two spaces.
func (r *ExecutorReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a human (see executor.WriteStatus).
func (r *ExecutorReport) WriteText(w io.Writer) {
	executor.WriteStatus(w, r.p, r.Executors, r.Problems)
}
