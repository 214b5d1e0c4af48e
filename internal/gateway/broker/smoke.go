package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// SmokeResult is what [SmokeRegistration] found: the executor as listed
// and the backend each call resolves to.
type SmokeResult struct {
	// Executor is the executor's name; Providers the providers its tool
	// lists (the provider argument's enum).
	Executor  string   `json:"executor"`
	Providers []string `json:"providers"`
	// Default is the backend a call without a provider resolves to, as
	// "provider (skill: server/tool)", and Why the rule that chose it.
	Default string `json:"default"`
	Why     string `json:"why"`
	// Pinned maps each provider to the backend a call pinned to it
	// resolves to.
	Pinned map[string]string `json:"pinned"`
}

// SmokeRegistration builds the executors the installed skills (load)
// would serve with opts and the registration reg applied on top of what
// is registered, and checks that reg's executor lists and resolves: each
// of reg's backends compiles against its skill's approved tool and is
// live as far as the registry decides (its skill enabled, its capability
// approved and not blocked, its mapping accepted), the executor is listed
// with every provider, a call without a provider resolves, and a call
// pinned to each provider resolves to that provider's backend. Facts that
// hold per principal (credentials, scope, policy) are taken as met: they
// decide each call, not the registration. No server is called.
func SmokeRegistration(ctx context.Context, load func(context.Context) ([]Skill, error), opts ExecutorOptions, reg store.Registration) (SmokeResult, error) {
	if opts.Catalog == nil {
		opts.Catalog = executor.Builtin()
	}
	base := opts.Registered
	opts.Registered = func(ctx context.Context) ([]store.Registration, error) {
		var regs []store.Registration
		if base != nil {
			var err error
			if regs, err = base(ctx); err != nil {
				return nil, err
			}
		}
		return append(regs, reg), nil
	}
	skills, err := load(ctx)
	if err != nil {
		return SmokeResult{}, fmt.Errorf("load installed skills: %w", err)
	}
	b := &Broker{opts: Options{Executors: opts}}
	cat, err := b.registered(ctx, skills)
	if err != nil {
		return SmokeResult{}, err
	}
	snap, _ := buildWith(skills, cat)
	es := snap.exec
	facts := executor.FactsFunc(func(bk *executor.Backend) executor.Off { return es.static[bk] })
	out := SmokeResult{Executor: reg.Executor, Pinned: map[string]string{}}
	_, backends := es.index.Lookup(reg.Executor)
	for _, want := range reg.Backends {
		i := slices.IndexFunc(backends, func(bk *executor.Backend) bool {
			return bk.Skill == want.Skill && bk.Provider == want.Provider && bk.Server == want.Server && bk.Tool == want.Tool
		})
		at := fmt.Sprintf("backend %s (%s: %s/%s)", want.Provider, want.Skill, want.Server, want.Tool)
		if i < 0 {
			if !slices.ContainsFunc(skills, func(s Skill) bool { return s.Key == want.Skill }) {
				return out, fmt.Errorf("%s: skill %s is not enabled; enable it (skillgate enable %s), then approve again", at, want.Skill, want.Skill)
			}
			return out, fmt.Errorf("%s: not built", at)
		}
		if off := facts.Off(backends[i]); !off.Live() {
			return out, fmt.Errorf("%s: off: %s", at, off)
		}
	}
	for _, l := range es.index.Live(facts) {
		if l.Executor.Name == reg.Executor {
			out.Providers = l.Providers
		}
	}
	if out.Providers == nil {
		return out, fmt.Errorf("executor %s is not listed", reg.Executor)
	}
	prefs := opts.Preferences.For("")
	res, err := es.index.Resolve(facts, reg.Executor, "", prefs)
	if err != nil {
		return out, fmt.Errorf("executor %s does not resolve: %w", reg.Executor, err)
	}
	out.Default, out.Why = describe(res.Backend), res.Why()
	for _, p := range out.Providers {
		res, err := es.index.Resolve(facts, reg.Executor, p, prefs)
		if err != nil {
			return out, fmt.Errorf("executor %s pinned to %s does not resolve: %w", reg.Executor, p, err)
		}
		if res.Backend.Provider != p {
			return out, fmt.Errorf("executor %s pinned to %s resolves to %s", reg.Executor, p, describe(res.Backend))
		}
		out.Pinned[p] = describe(res.Backend)
	}
	return out, nil
}

func describe(b *executor.Backend) string {
	return fmt.Sprintf("%s (%s: %s/%s)", b.Provider, b.Skill, b.Server, b.Tool)
}

// String is the result in one line, for audit records and the CLI.
func (r SmokeResult) String() string {
	pins := make([]string, 0, len(r.Pinned))
	for _, p := range r.Providers {
		pins = append(pins, p+" → "+r.Pinned[p])
	}
	return fmt.Sprintf("%s lists providers %s; a call resolves to %s (%s); pinned: %s",
		r.Executor, strings.Join(r.Providers, ", "), r.Default, r.Why, strings.Join(pins, "; "))
}

// Smoke is [SmokeRegistration] over load and opts, as a function of the
// registration returning its findings in one line: the check the changes
// queue runs before it applies a change (change.Options.Smoke).
func Smoke(load func(context.Context) ([]Skill, error), opts ExecutorOptions) func(context.Context, store.Registration) (string, error) {
	return func(ctx context.Context, reg store.Registration) (string, error) {
		res, err := SmokeRegistration(ctx, load, opts, reg)
		if err != nil {
			return "", err
		}
		return res.String(), nil
	}
}
