package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// executorOptions turns the configuration's executors section into the
// broker's options: every provider a preference names must be one of the
// catalog's (the errors name the field under executors:, for
// [Main.validateConfig]). Credentials are read from the process environment until the
// credential store answers per principal.
func executorOptions(cfg *Config) (broker.ExecutorOptions, error) {
	cat := executor.Builtin()
	prefs := cfg.Executors.Preferences
	check := func(at string, names []string) error {
		for i, n := range names {
			if _, ok := cat.Provider(n); !ok {
				var known []string
				for _, p := range cat.Providers {
					known = append(known, p.Name)
				}
				return fmt.Errorf("preferences.%s[%d]: unknown provider %q; use one of %s", at, i, n, strings.Join(known, ", "))
			}
		}
		return nil
	}
	if err := check("global", prefs.Global); err != nil {
		return broker.ExecutorOptions{}, err
	}
	tenants := make([]string, 0, len(prefs.Tenants))
	for t := range prefs.Tenants {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	for _, t := range tenants {
		if err := capability.CheckID("tenant", t); err != nil {
			return broker.ExecutorOptions{}, fmt.Errorf("preferences.tenants: %v", err)
		}
		if err := check("tenants."+t, prefs.Tenants[t]); err != nil {
			return broker.ExecutorOptions{}, err
		}
	}
	return broker.ExecutorOptions{Catalog: cat, Preferences: broker.ExecutorPreferences{Global: prefs.Global, Tenants: prefs.Tenants}}, nil
}

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

func (m *Main) executorsCommand() *cobra.Command {
	var agent, tier, tenant string
	var asJSON bool
	c := &cobra.Command{
		Use:   "executors [--agent A --tier T --tenant X] [--json]",
		Short: "Show every executor, its backends, and why each backend is live or off",
		Long: `executors lists the provider-neutral executors (create_issue,
read_file_contents …) for one principal: for each executor whether it is
live or dormant, the backend a call without a provider would go to and why,
and every backend (provider, skill, server, tool) with why it is live or
off: skill disabled or not installed, capability not approved or blocked by
drift, credential missing for the tenant, out of the agent's scope or
forbidden by policy, or a mapping refused. See docs/executors.md.

Exit status: 0 ok, 1 failure, 2 usage.`,
		Example: "  skillgate executors --agent drafter --tier T3 --tenant acme\n  skillgate executors --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := tierFlag("--tier", tier)
			if err != nil {
				return err
			}
			p := capability.Principal{Tenant: tenant, Agent: agent, Tier: t}
			if err := p.Validate(); err != nil {
				return usageErr("%v", err)
			}
			cfg, err := m.config()
			if err != nil {
				return err
			}
			opts, err := executorOptions(cfg)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			// Credentials as the gateway resolves them: the principal's
			// agent, then tenant entry of the credential store, then
			// skillgate's environment.
			creds, err := m.openCredentials(ctx)
			if err != nil {
				return err
			}
			check := broker.CredentialsOf(creds)
			opts.Credentials = func(p capability.Principal, names []string) []string { return check(ctx, p, "", names) }
			eng, db, err := m.openPolicy(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			opts.Registered = db.Registrations
			svc, closeInstalls, err := m.openInstalls(ctx)
			if err != nil {
				return err
			}
			defer closeInstalls()
			b, err := broker.New(broker.Options{Load: broker.LoadInstalled(svc), Decider: broker.NewPolicyDecider(eng), Upstream: noUpstream{}, Executors: opts})
			if err != nil {
				return err
			}
			if err := b.Reload(ctx); err != nil {
				return err
			}
			inactive, err := inactiveProviders(ctx, svc)
			if err != nil {
				return err
			}
			st := b.ExecutorStatus(p, inactive...)
			if asJSON {
				out := struct {
					Principal string                    `json:"principal"`
					Executors []executor.ExecutorStatus `json:"executors"`
					Problems  []string                  `json:"problems"`
				}{p.String(), st, b.ExecutorProblems()}
				if out.Problems == nil {
					out.Problems = []string{}
				}
				enc := json.NewEncoder(m.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			fmt.Fprintf(m.Stdout, "executors for %s\n", p)
			for _, e := range st {
				state := "live"
				if e.Dormant {
					state = "dormant"
				}
				fmt.Fprintf(m.Stdout, "\n%s  %s\n", e.Name, state)
				if e.Default != "" {
					fmt.Fprintf(m.Stdout, "  default: %s\n", e.Why)
				}
				if len(e.Backends) == 0 {
					fmt.Fprintln(m.Stdout, "  no provider skill declares a backend")
					continue
				}
				tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
				for _, bk := range e.Backends {
					why := "live"
					if bk.Off != nil {
						why = "off: " + bk.Off.String()
					}
					fmt.Fprintf(tw, "  %s\t%s:%s/%s\t%s\n", bk.Provider, bk.Skill, bk.Server, bk.Tool, why)
				}
				tw.Flush()
			}
			for _, pr := range b.ExecutorProblems() {
				fmt.Fprintf(m.Stdout, "\nrefused: %s\n", pr)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&agent, "agent", envOr(m.Getenv("SKILLGATE_AGENT"), "operator"), "agent id ($SKILLGATE_AGENT)")
	f.StringVar(&tier, "tier", envOr(m.Getenv("SKILLGATE_TIER"), "T1"), "agent tier, T0–T4 ($SKILLGATE_TIER)")
	f.StringVar(&tenant, "tenant", envOr(m.Getenv("SKILLGATE_TENANT"), "default"), "tenant ($SKILLGATE_TENANT)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
