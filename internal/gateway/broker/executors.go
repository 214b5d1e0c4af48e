package broker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// ExecutorOptions configures the executors the broker serves (see
// docs/executors.md): provider-neutral tools such as create_issue, each
// routed per call to a backend of a provider skill.
type ExecutorOptions struct {
	// Catalog declares the executors and providers; nil means
	// executor.Builtin().
	Catalog *executor.Catalog
	// Preferences are the configured provider orders.
	Preferences ExecutorPreferences
	// Registered, when set, returns what applied promote_provider changes
	// registered: executors added to Catalog and backends of provider
	// skills beside their backends.yaml. Read at every reload.
	Registered func(ctx context.Context) ([]store.Registration, error)
	// Credentials reports which credentials of a backend's server are
	// missing for a principal; nil reads the process environment
	// (executor.EnvCredentials(os.LookupEnv)).
	Credentials executor.CredentialCheck
	// Connections resolves principals' OAuth connections to remote
	// servers: a backend whose server needs one the principal lacks is
	// off (connection_required), and a call's account argument picks one
	// of the principal's accounts. Nil: no server is reached through a
	// connection.
	Connections Connections
}

// Connections is what the broker asks of the connection store;
// *credential.Store implements it.
type Connections interface {
	// Use returns the connection (provider, tenant, account) who's call
	// to server d uses, pinned by pin or else the default: the zero use
	// for a server reached without one, an error wrapping
	// mcpclient.ErrConnectionRequired when who lacks a usable one.
	Use(who capability.Principal, d mcpclient.ServerDecl, pin string) (mcpclient.ConnectionUse, error)
}

// ExecutorPreferences are the provider preference orders of
// configuration: per tenant, then global.
type ExecutorPreferences struct {
	Global  []string            `json:"global,omitempty"`
	Tenants map[string][]string `json:"tenants,omitempty"`
}

// For returns the preferences a principal of tenant resolves with.
func (p ExecutorPreferences) For(tenant string) executor.Preferences {
	return executor.Preferences{Tenant: p.Tenants[tenant], Global: p.Global}
}

// RegisteredBackend is a backend an applied promote_provider change gave a
// skill (see package change): a backends.yaml entry with its provider.
type RegisteredBackend struct {
	// Change is the change that registered it.
	Change   int64
	Provider string
	executor.BackendDecl
}

// registeredBackends returns what applied changes registered as each
// skill's backends, by skill key.
func registeredBackends(regs []store.Registration) map[string][]RegisteredBackend {
	bySkill := map[string][]RegisteredBackend{}
	for _, r := range regs {
		for _, b := range r.Backends {
			bySkill[b.Skill] = append(bySkill[b.Skill], RegisteredBackend{Change: r.Change, Provider: b.Provider,
				BackendDecl: executor.BackendDecl{Executor: r.Executor, Server: b.Server, Tool: b.Tool, Arguments: b.Arguments}})
		}
	}
	return bySkill
}

// ReadBackends reads a skill's backends file from dir, if it has one: nil
// when it has none. The read is bounded by executor.MaxFileBytes.
func ReadBackends(dir string) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, executor.BackendsFileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, executor.MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > executor.MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", executor.BackendsFileName, executor.MaxFileBytes)
	}
	return data, nil
}

// execSnap is the executors part of a snapshot: immutable.
type execSnap struct {
	cat   *executor.Catalog
	index *executor.Index
	// static are the backends off for every principal: not approved,
	// blocked by drift, a mapping or declaration refused.
	static map[*executor.Backend]executor.Off
	// caps are the live-able backends' capabilities; creds the credential
	// names of their servers.
	caps  map[*executor.Backend]*Capability
	creds map[*executor.Backend][]string
	// mapped holds the IDs of capabilities a backend maps: agents see the
	// executor, not the raw tool.
	mapped map[string]bool
	// names are the executors with at least one backend.
	names map[string]bool
	// remote are the executors with a backend whose server may be
	// reached through a connection: their tools take the account
	// argument.
	remote map[string]bool
	// tools caches, per executor, its tool definition for each set of
	// live providers seen (copy on write): a listing allocates no key.
	tools map[string]*atomic.Pointer[[]cachedTool]
}

// cachedTool is an executor's tool for one set of live providers.
type cachedTool struct {
	providers []string
	tool      *mcp.Tool
}

// tool returns ex's tool with the provider enum providers, built once.
func (es *execSnap) tool(ex *executor.Executor, providers []string) *mcp.Tool {
	cache := es.tools[ex.Name]
	if cache == nil { // not an executor of this snapshot: build, keep nothing
		return &mcp.Tool{Name: ex.Name, Description: ex.Description, InputSchema: es.schema(ex, providers)}
	}
	for {
		old := cache.Load()
		if old != nil {
			for _, c := range *old {
				if slices.Equal(c.providers, providers) {
					return c.tool
				}
			}
		}
		t := &mcp.Tool{Name: ex.Name, Description: ex.Description, InputSchema: es.schema(ex, providers)}
		var next []cachedTool
		if old != nil {
			next = slices.Clone(*old)
		}
		next = append(next, cachedTool{providers: slices.Clone(providers), tool: t})
		if cache.CompareAndSwap(old, &next) {
			return t
		}
	}
}

// schema is ex's tool schema with the provider argument's enum, and the
// account argument when a backend of ex is a remote server.
func (es *execSnap) schema(ex *executor.Executor, providers []string) json.RawMessage {
	s := executor.ToolSchema(ex, providers)
	if es.remote[ex.Name] {
		s = executor.WithAccountArg(s)
	}
	return s
}

// buildExecutors compiles the skills' backends files against the built
// capabilities. A backend whose capability is missing or refused is kept,
// off for everyone with the reason, so `skillgate executors` shows it.
func buildExecutors(cat *executor.Catalog, skills []Skill, caps []*Capability) (*execSnap, []string) {
	es := &execSnap{cat: cat, static: map[*executor.Backend]executor.Off{}, caps: map[*executor.Backend]*Capability{},
		creds: map[*executor.Backend][]string{}, mapped: map[string]bool{}, names: map[string]bool{}, remote: map[string]bool{}}
	byRef := map[capability.Ref]*Capability{}
	for _, c := range caps {
		byRef[c.Ref()] = c
	}
	var problems []string
	var all []*executor.Backend
	comp := executor.NewCompiler()
	for _, s := range skills {
		add := func(file string, i int, provider string, d executor.BackendDecl) {
			b := &executor.Backend{Skill: s.Key, Provider: provider, Executor: cat.Lookup(d.Executor), Server: d.Server, Tool: d.Tool}
			all = append(all, b)
			at := fmt.Sprintf("%s: backends[%d] (%s)", file, i, d.Executor)
			ref := b.Ref()
			c := byRef[ref]
			if c == nil {
				off := whyMissing(s, ref)
				es.static[b] = off
				if off.Code == executor.OffInvalid {
					problems = append(problems, at+": "+off.Detail)
				}
				return
			}
			raw, _ := c.Tool.InputSchema.(json.RawMessage)
			m, err := comp.CompileMapping(b.Executor, capability.Tool{ExtensionID: d.Server, CapabilityID: d.Tool, InputSchema: raw}, d.Arguments)
			if err != nil {
				es.static[b] = executor.Off{Code: executor.OffInvalid, Detail: at + ": " + err.Error()}
				problems = append(problems, at+": "+err.Error())
				return
			}
			b.Mapping = m
			es.caps[b] = c
			es.mapped[c.ID()] = true
			es.creds[b] = s.Servers[d.Server].Credentials()
			if mcpclient.BearerTarget(s.Servers[d.Server]) {
				es.remote[b.Executor.Name] = true
			}
		}
		declared := map[string]bool{}
		if len(s.Backends) > 0 {
			file := s.Key + "/" + executor.BackendsFileName
			bf, err := executor.ParseBackends(file, s.Backends, cat)
			if err != nil {
				problems = append(problems, err.Error())
			} else {
				for i, d := range bf.Backends {
					declared[d.Executor] = true
					add(file, i, bf.Provider, d)
				}
			}
		}
		for i, r := range s.Registered {
			file := fmt.Sprintf("%s: change %d", s.Key, r.Change)
			switch {
			case cat.Lookup(r.Executor) == nil:
				problems = append(problems, fmt.Sprintf("%s: backends[%d] (%s): executor %s is not in the catalog", file, i, r.Executor, r.Executor))
			case declared[r.Executor]:
				problems = append(problems, fmt.Sprintf("%s: backends[%d] (%s): the skill's %s already serves %s; the registered backend is not used", file, i, r.Executor, executor.BackendsFileName, r.Executor))
			default:
				declared[r.Executor] = true
				add(file, i, r.Provider, r.BackendDecl)
			}
		}
	}
	es.index = executor.NewIndex(all)
	es.tools = map[string]*atomic.Pointer[[]cachedTool]{}
	for _, b := range all {
		es.names[b.Executor.Name] = true
		if es.tools[b.Executor.Name] == nil {
			es.tools[b.Executor.Name] = &atomic.Pointer[[]cachedTool]{}
		}
	}
	return es, problems
}

// whyMissing says why a backend's capability was not built.
func whyMissing(s Skill, ref capability.Ref) executor.Off {
	id := ref.Short()
	if why, blocked := s.Blocked[id]; blocked {
		return executor.Off{Code: executor.OffDrift, Detail: fmt.Sprintf("capability %s is blocked: %s", ref, why)}
	}
	if _, ok := s.Servers[ref.ExtensionID]; !ok {
		if s.Manifest != nil && slices.ContainsFunc(s.Manifest.Providers, func(p manifest.Provider) bool { return p.ServerID == ref.ExtensionID }) {
			return executor.Off{Code: executor.OffInvalid, Detail: fmt.Sprintf("server %q is not declared in mcp.json", ref.ExtensionID)}
		}
		return executor.Off{Code: executor.OffInvalid, Detail: fmt.Sprintf("server %q is not a server of the skill's approved manifest", ref.ExtensionID)}
	}
	if pins, ok := s.Pins[ref.ExtensionID]; ok {
		if _, ok := pins.Lookup(ref.CapabilityID); ok {
			return executor.Off{Code: executor.OffNotApproved, Detail: fmt.Sprintf("capability %s is not in the approved manifest", ref)}
		}
	}
	if slices.Contains(s.LeftOut[ref.ExtensionID], ref.CapabilityID) {
		return executor.Off{Code: executor.OffNotApproved, Detail: fmt.Sprintf("capability %s was left out at approval", ref)}
	}
	return executor.Off{Code: executor.OffInvalid, Detail: fmt.Sprintf("server %s offers no tool %q", ref.ExtensionID, ref.CapabilityID)}
}

// scopeChecker is the optional ability of a [Decider] to say whether one
// capability is in a principal's scope without listing the scope.
type scopeChecker interface {
	InScope(p capability.Principal, c *Capability) bool
}

// facts returns the liveness of backends for p. inScope, when not nil,
// is p's scope as a set (a listing computes it once).
func (b *Broker) facts(es *execSnap, p capability.Principal, inScope map[*Capability]bool) executor.Facts {
	creds := b.opts.Executors.Credentials
	return executor.FactsFunc(func(bk *executor.Backend) executor.Off {
		if off, ok := es.static[bk]; ok {
			return off
		}
		c := es.caps[bk]
		if names := es.creds[bk]; len(names) > 0 {
			if missing := creds(p, names); len(missing) > 0 {
				return executor.Off{Code: executor.OffCredential, Detail: fmt.Sprintf("credential %s missing for tenant %s", strings.Join(missing, ", "), p.Tenant)}
			}
		}
		var in bool
		switch sc, ok := b.opts.Decider.(scopeChecker); {
		case inScope != nil:
			in = inScope[c]
		case ok:
			in = sc.InScope(p, c)
		default:
			in = slices.Contains(b.opts.Decider.Scope(p), c)
		}
		if !in {
			if !slices.Contains(c.InvokableBy, string(p.Tier)) && len(c.InvokableBy) > 0 {
				return executor.Off{Code: executor.OffScope, Detail: fmt.Sprintf("agent tier %s may not invoke skill %s", p.Tier, c.Skill)}
			}
			return executor.Off{Code: executor.OffPolicy, Detail: fmt.Sprintf("capability %s is forbidden for %s by policy", c.ID(), p.ID())}
		}
		if conns := b.opts.Executors.Connections; conns != nil {
			if _, err := conns.Use(p, c.target.Server, ""); err != nil {
				return executor.Off{Code: executor.OffConnection, Detail: oneLine(err)}
			}
		}
		return executor.Off{}
	})
}

// connectionRequired returns why executor name is dormant for p when a
// backend of it lacks only a connection: the typed result an agent gets
// ("connection required: PROVIDER for tenant TENANT (...)") instead of an
// unknown tool. It is nil when no backend is off for that reason.
func (b *Broker) connectionRequired(es *execSnap, p capability.Principal, name string) error {
	_, backends := es.index.Lookup(name)
	f := b.facts(es, p, nil)
	for _, bk := range backends {
		if off := f.Off(bk); off.Code == executor.OffConnection {
			if _, err := b.opts.Executors.Connections.Use(p, es.caps[bk].target.Server, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// useConnection resolves the connection p's call to c's server uses,
// the account pin or else the default, when the broker has connections.
// The connection is named in a's audit data (on a refusal, the one that
// was lacking) and its account is put in the returned context for the
// policy and on a for the pool. The error wraps
// mcpclient.ErrConnectionRequired when p lacks a usable one.
func (b *Broker) useConnection(ctx context.Context, a *admission, p capability.Principal, c *Capability, pin string) (context.Context, error) {
	conns := b.opts.Executors.Connections
	if conns == nil {
		return ctx, nil
	}
	use, err := conns.Use(p, c.target.Server, pin)
	if err != nil {
		a.note("connection", connectionData(err))
		return ctx, err
	}
	if use.Account == "" {
		return ctx, nil // a server reached without a connection
	}
	a.account = use.Account
	a.note("connection", use)
	return policy.WithAccount(ctx, use.Account), nil
}

// note sets key of the call's audit data.
func (a *admission) note(key string, v any) {
	if a.data == nil {
		a.data = map[string]any{}
	}
	a.data[key] = v
}

// connectionData is the audit data naming the connection a refused call
// lacked, which `skillgate pending` lists for operators.
func connectionData(err error) *mcpclient.ConnectionUse {
	var cr *mcpclient.ConnectionRequiredError
	if !errors.As(err, &cr) {
		return nil
	}
	return &mcpclient.ConnectionUse{Provider: cr.Provider, Tenant: cr.Tenant}
}

// executorTools returns the tools of the executors live for p, given p's
// scope.
func (b *Broker) executorTools(es *execSnap, p capability.Principal, scope []*Capability) []*mcp.Tool {
	if es == nil || es.index.Len() == 0 {
		return nil
	}
	in := make(map[*Capability]bool, len(scope))
	for _, c := range scope {
		in[c] = true
	}
	live := es.index.Live(b.facts(es, p, in))
	out := make([]*mcp.Tool, 0, len(live))
	for _, l := range live {
		out = append(out, es.tool(l.Executor, l.Providers))
	}
	return out
}

// InactiveSkill is an installed provider skill the broker does not serve
// (disabled, or not approved yet): its backends are off for everyone, for
// the reason Off gives.
type InactiveSkill struct {
	Key string
	// Backends is its backends.yaml.
	Backends []byte
	Off      executor.Off
}

// ExecutorStatus reports every executor of the catalog with each backend
// and why it is live or off for p, the backends of inactive skills
// included: what `skillgate executors` shows.
func (b *Broker) ExecutorStatus(p capability.Principal, inactive ...InactiveSkill) []executor.ExecutorStatus {
	es := b.snap.Load().exec
	if es == nil {
		return nil
	}
	st := es.index.Route(es.cat, b.facts(es, p, nil), b.opts.Executors.Preferences.For(p.Tenant))
	byName := map[string]int{}
	for i, e := range st {
		byName[e.Name] = i
	}
	for _, in := range inactive {
		bf, err := executor.ParseBackends(in.Key+"/"+executor.BackendsFileName, in.Backends, es.cat)
		if err != nil {
			continue
		}
		for _, d := range bf.Backends {
			i, ok := byName[d.Executor]
			if !ok {
				continue
			}
			off := in.Off
			st[i].Backends = append(st[i].Backends, executor.BackendStatus{Provider: bf.Provider, Skill: in.Key, Server: d.Server, Tool: d.Tool, Off: &off})
		}
	}
	for i := range st {
		slices.SortStableFunc(st[i].Backends, func(x, y executor.BackendStatus) int {
			return cmp.Or(strings.Compare(x.Provider, y.Provider), strings.Compare(x.Skill, y.Skill))
		})
	}
	return st
}

// ExecutorProblems lists the backends files and mappings the last reload
// refused.
func (b *Broker) ExecutorProblems() []string { return slices.Clone(b.snap.Load().execProblems) }

// admitExecutor does for a call of an executor what admit does for a raw
// capability, with the resolution between: the provider argument taken
// out, the canonical arguments validated against the executor's schema,
// the backend resolved, the arguments mapped onto its tool, and the call
// decided by policy as a call of the backend's capability. The audit
// record names the executor, the backend, the provider, the rule that
// chose it and the mapped arguments' hash.
func (b *Broker) admitExecutor(ctx context.Context, es *execSnap, who capability.Caller, name string, rawArgs json.RawMessage) admission {
	start := b.opts.Now()
	p := who.Principal
	a := admission{start: start, data: map[string]any{"executor": name}, rec: audit.Record{
		Time: start, Actor: "agent:" + p.Tenant + "/" + p.Agent, Session: who.SessionID,
		Action: "capability.invoke", Subject: name,
	}}
	if len(rawArgs) == 0 || string(rawArgs) == "null" {
		rawArgs = json.RawMessage("{}")
	}
	if h, err := audit.HashArgs(rawArgs); err == nil {
		a.rec.ArgsHash = h
	}
	refuse := func(reason, msg string) admission {
		a.rec.Decision, a.rec.Reasons = capability.Deny, []string{reason}
		a.rec.LatencyNS = b.opts.Now().Sub(start).Nanoseconds()
		a.seal()
		b.record(ctx, a.rec)
		a.refusal = msg
		return a
	}
	args, err := decodeArgs(rawArgs)
	if err != nil || args == nil {
		return refuse("invalid arguments: not a JSON object", fmt.Sprintf("skillgate: invalid arguments for %s: they must be a JSON object", name))
	}
	pin, ok := takeArg(args, executor.ProviderArg)
	if !ok {
		return refuse("invalid arguments: provider is not a provider name", fmt.Sprintf("skillgate: invalid arguments for %s: provider must be the name of a provider, like github", name))
	}
	if pin != "" {
		a.data["pin"] = pin
	}
	accountPin, ok := takeArg(args, executor.AccountArg)
	if !ok {
		return refuse("invalid arguments: account is not an account label", fmt.Sprintf("skillgate: invalid arguments for %s: account must be the label of one of your connected accounts, like work", name))
	}
	if accountPin != "" {
		a.data["accountPin"] = accountPin
	}
	ex, _ := es.index.Lookup(name)
	if err := ex.Validate(args); err != nil {
		return refuse("invalid arguments: "+oneLine(err), fmt.Sprintf("skillgate: invalid arguments for %s: %s", name, oneLine(err)))
	}
	r, err := es.index.Resolve(b.facts(es, p, nil), name, pin, b.opts.Executors.Preferences.For(p.Tenant))
	if err != nil {
		if errors.Is(err, executor.ErrDormant) {
			if cerr := b.connectionRequired(es, p, name); cerr != nil {
				a.data["connection"] = connectionData(cerr)
				return refuse(oneLine(cerr), "skillgate: "+oneLine(cerr))
			}
			return refuse("not in scope: "+oneLine(err), fmt.Sprintf("skillgate: unknown tool %q: it is not among the capabilities you may call", name))
		}
		return refuse("resolution: "+oneLine(err), fmt.Sprintf("skillgate: %s cannot run as asked: %s", name, oneLine(err)))
	}
	bk := r.Backend
	c := es.caps[bk]
	a.c = c
	a.rec.Subject = c.ID()
	a.data["provider"], a.data["backend"], a.data["resolution"] = bk.Provider, c.ID(), r.Why()
	ctx, err = b.useConnection(ctx, &a, p, c, accountPin)
	if err != nil {
		return refuse(oneLine(err), "skillgate: "+oneLine(err))
	}
	a.result = bk.Result
	mapped, err := bk.Mapping.ApplyContext(ctx, args)
	if err != nil {
		return refuse("argument mapping: "+oneLine(err), fmt.Sprintf("skillgate: %s on %s: %s", name, bk.Provider, oneLine(err)))
	}
	if h, err := audit.HashArgs(mapped); err == nil {
		a.data["mappedArgsHash"] = h
	}
	a.args = mapped
	targs, err := decodeArgs(mapped)
	if err != nil {
		return refuse("argument mapping: "+oneLine(err), fmt.Sprintf("skillgate: %s on %s: the mapped arguments do not decode", name, bk.Provider))
	}
	// Cedar sees the backend capability as the resource, and the executor
	// as context.executor.
	b.decide(policy.WithExecutor(ctx, name), &a, who, c, name, targs)
	return a
}

// takeArg removes skillgate's own argument name from an executor call's
// args and returns its value: "" when absent; ok false when it is not a
// non-empty string.
func takeArg(args map[string]any, name string) (string, bool) {
	v, present := args[name]
	if !present {
		return "", true
	}
	s, isString := v.(string)
	if !isString || s == "" {
		return "", false
	}
	delete(args, name)
	return s, true
}

// seal writes the admission's data into its record.
func (a *admission) seal() {
	if len(a.data) > 0 {
		a.rec.Data, _ = json.Marshal(a.data)
	}
}

// sortTools sorts tools by name.
func sortTools(ts []*mcp.Tool) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}
