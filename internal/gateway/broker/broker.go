// Package broker turns installed skills' capabilities into tools an agent
// can call through skillgate, and decides every call.
//
// For each principal the broker lists only the capabilities inside its
// scope (enabled capabilities of enabled skills its tier may invoke, as the
// policy allows), under their upstream names, namespaced as
// "<skill>__<tool>" where two skills offer the same name or a name is one
// of the gateway's own. A call is then:
//
//  1. looked up in the principal's scope (a tool outside it does not exist);
//  2. validated against the tool's approved input schema;
//  3. decided by the policy ([Decider]): allow, deny or require_approval,
//     with reasons naming the policy, constraint or grant;
//  4. when allowed, forwarded to the upstream server through a pooled
//     connection that enforces the approved pins;
//  5. audited: who, session, capability, a hash of the arguments, the
//     decision, its reasons and the latency.
//
// A refusal is an MCP tool error whose text tells the agent why, and that a
// human must approve where one must; it never reaches the upstream server.
// The command that approves is never sent to the agent (an agent with a
// shell on the host could run it): operators find it in the log, in the
// audit record and in `skillgate pending`.
package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// Skill is one enabled, installed skill version as the broker serves it:
// its approved manifest, its servers and their approved pins.
type Skill struct {
	// Key is the skill's identity and Digest its version.
	Key, Digest string
	// Content is the digest of the skill's tree (Dir) when it differs
	// from Digest: a version whose servers launch fetched packages.
	Content string
	// Dir is the skill's directory in managed storage (the working
	// directory of its stdio servers).
	Dir string
	// Servers are the declarations from the skill's mcp.json, by id.
	Servers map[string]mcpclient.ServerDecl
	// Pins are the approved pins, by server id.
	Pins map[string]capability.PinSet
	// LeftOut lists per server id the tools offered at approval that the
	// approval left out: not drift when a connection sees them.
	LeftOut map[string][]string
	// Manifest is the approved manifest.
	Manifest *manifest.Manifest
	// Blocked maps "server/tool" to why the capability is blocked (pin
	// drift, missing metadata); blocked capabilities are not offered.
	Blocked map[string]string
	// Tier is the skill's tier (1–3) and InvokableBy the agent tiers that
	// may invoke it, from its SKILL.md.
	Tier        int
	InvokableBy []string
	// Trust is the trust the skill is served at ("" is imported), and
	// ApprovedTrust the trust its manifest was approved for ("" is
	// imported): policy refuses a capability whose two differ
	// (trust_mismatch). A first_party skill's tools are not pinned: they
	// are offered as its shipped manifest describes them, and each
	// connection pins what its server lists at connect.
	Trust, ApprovedTrust capability.Trust
	// Backends is the skill's backends.yaml, if it has one: how it serves
	// executors (see [ExecutorOptions] and docs/executors.md).
	Backends []byte
	// Registered are the backends applied promote_provider changes gave
	// the skill.
	Registered []RegisteredBackend
}

// Capability is one capability of one skill, as offered to agents.
type Capability struct {
	// Skill is the skill's key.
	Skill string
	// Capability is the approved manifest entry.
	Capability manifest.Capability
	// Name is the tool name agents see.
	Name string
	// Tool is the MCP tool definition agents see: the upstream definition
	// as pinned, under Name.
	Tool *mcp.Tool
	// SkillTier and InvokableBy are the skill's.
	SkillTier   int
	InvokableBy []string
	// Trust and ApprovedTrust are the skill's (see [Skill]), never empty.
	Trust, ApprovedTrust capability.Trust
	// Credentials are those its server references (sorted), for a
	// first_party capability: it is dormant for a principal while one is
	// not configured ([Options.Configured]).
	Credentials []string

	target mcpclient.Target
	id     string // ID(), computed once at load
	schema *jsonschema.Schema
	// emptyErr is the schema's verdict on the empty object, the arguments
	// of every call of a tool without parameters, found once at load.
	emptyErr error
}

// validate checks call arguments against the capability's input schema.
func (c *Capability) validate(args map[string]any) error {
	if len(args) == 0 {
		return c.emptyErr
	}
	return c.schema.Validate(args)
}

// Target is the upstream server the capability is forwarded to.
func (c *Capability) Target() mcpclient.Target { return c.target }

// ID returns the capability's identity, "skill:extension/capability"
// ([capability.Ref.String]): the name grants, policies and audit
// records use.
func (c *Capability) ID() string {
	if c.id != "" {
		return c.id
	}
	return c.Ref().String()
}

// Ref returns the capability's reference: its skill, server and tool.
func (c *Capability) Ref() capability.Ref {
	return capability.Ref{Skill: c.Skill, ExtensionID: c.Capability.ExtensionID, CapabilityID: c.Capability.CapabilityID}
}

// Decision is a policy decision on one call.
type Decision struct {
	// Effect is what policy decided: allow, deny or require_approval, the
	// value the audit record carries.
	Effect capability.Effect
	// Reasons name the policies, constraints or grants that decided, as
	// operators see them (the audit record, the log): with the policy
	// file's path.
	Reasons []string
	// Told are the reasons as the agent is told them: policies by id and
	// file name, never a host path. Nil means Reasons.
	Told []string
	// Approve, for require_approval, is the command an operator runs to
	// approve the call. It is for operators only (the log, the audit
	// record, `skillgate pending`), never shown to the agent.
	Approve string
	// Release, when set on an allowed decision, gives back what the
	// decision consumed (a one-use grant's use); the broker calls it when
	// the call then never reached the server.
	Release func(context.Context) error
}

// told returns the reasons an agent is told.
func (d Decision) told() []string {
	if d.Told != nil {
		return d.Told
	}
	return d.Reasons
}

// Decider is the policy as the broker uses it. Scope and Decide must be
// fast and must not do I/O on the common path: they run on every listing
// and every call.
type Decider interface {
	// SetCapabilities replaces the registry projection the decider works
	// from; called whenever installed skills change.
	SetCapabilities(caps []*Capability)
	// Scope returns the capabilities p may see, out of the last set given.
	Scope(p capability.Principal) []*Capability
	// Find returns the capability named name in p's scope, or nil.
	Find(p capability.Principal, name string) *Capability
	// Decide decides one call of c by p with the given arguments.
	Decide(ctx context.Context, p capability.Principal, sessionID string, c *Capability, args map[string]any) Decision
}

// Caller is the pool the broker forwards through; *mcpclient.Pool
// implements it.
type Caller interface {
	// Call calls tool on t's server for who, whose credentials the server
	// is started with: args, a JSON object, are read only before Call
	// returns; done receives the server's result object (see
	// [mcpclient.ResultFunc]) or the error, exactly once.
	Call(ctx context.Context, who capability.Principal, t mcpclient.Target, tool string, args json.RawMessage, done mcpclient.ResultFunc)
	// Retain closes the connections of targets not in keep.
	Retain(keep map[string]bool)
}

// Recorder receives audit records; *audit.Writer implements it.
type Recorder interface {
	Record(audit.Record) error
}

// DurableRecorder is a [Recorder] that can also tell when a record is
// committed; *audit.Writer implements it. See Options.DurableAudit.
type DurableRecorder interface {
	Recorder
	// RecordCommitted queues r; the channel receives the outcome of its
	// commit.
	RecordCommitted(r audit.Record) (<-chan error, error)
}

// Options configures a [Broker]. Load, Decider and Upstream are required.
type Options struct {
	// Load returns the enabled installed skills; called by Reload.
	Load func(ctx context.Context) ([]Skill, error)
	Decider
	Upstream Caller
	// Audit receives one record per decision; nil records nothing.
	Audit Recorder
	// DurableAudit, with an Audit that is a [DurableRecorder], passes an
	// answered call's result on only once its audit record is committed:
	// an agent never sees a call succeed that a crash (even SIGKILL) then
	// leaves out of the log. It costs the call the wait for the next audit
	// batch's commit (group commit, a few milliseconds). Off, the record
	// is queued after the result is passed on.
	DurableAudit bool
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Configured says which credentials of a first_party capability's
	// server are not configured for a principal: while any is, the
	// capability is dormant for it (not listed; a call is an unknown
	// tool). Nil: never dormant.
	Configured CredentialCheck
	// Executors configures the executors served from the skills' backends.
	Executors ExecutorOptions
	// Resources reads the files of the skills installed skills' servers
	// publish (see [Broker.ReadPublished]); nil relays none.
	Resources ResourceReader
	// OnSkillDrift, when set, is told of a published skill that failed
	// verification while relayed (it is blocked in the broker at once); it
	// must not block.
	OnSkillDrift func(skill, serverID string, d []manifest.SkillDrift)
}

// Broker implements [mcpserver.CapabilitySource]. It is safe for concurrent
// use; Reload swaps an immutable snapshot.
type Broker struct {
	opts Options
	log  *slog.Logger
	snap atomic.Pointer[snapshot]
	// forwarding counts allowed calls whose audit record is not yet
	// queued (see Drain).
	forwarding atomic.Int64
	// blocked are the published skills drift blocked since the last load.
	blocked blockedSkills
	// durable is Options.Audit when Options.DurableAudit holds and it can
	// wait for commits.
	durable DurableRecorder

	reloadMu sync.Mutex
}

type snapshot struct {
	caps []*Capability
	// exec is the executors and their backends; execProblems the backends
	// refused.
	exec         *execSnap
	execProblems []string
	// published are the approved published skills relayed, by path.
	published []*published
}

// New returns a broker with no capabilities; call Reload to load them.
func New(opts Options) (*Broker, error) {
	if opts.Load == nil || opts.Decider == nil || opts.Upstream == nil {
		return nil, errors.New("broker: Options.Load, Decider and Upstream are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Executors.Catalog == nil {
		opts.Executors.Catalog = executor.Builtin()
	}
	if opts.Executors.Credentials == nil {
		opts.Executors.Credentials = executor.EnvCredentials(os.LookupEnv)
	}
	b := &Broker{opts: opts, log: opts.Logger}
	if dr, ok := opts.Audit.(DurableRecorder); ok && opts.DurableAudit {
		b.durable = dr
	}
	b.snap.Store(&snapshot{exec: &execSnap{cat: opts.Executors.Catalog, index: executor.NewIndex(nil)}})
	b.opts.Decider.SetCapabilities(nil)
	return b, nil
}

// Reload rebuilds the capability set from Options.Load, hands it to the
// decider, and closes upstream connections no longer needed. It returns
// the problems of individual capabilities (which are left out) joined, and
// fails only when loading fails.
func (b *Broker) Reload(ctx context.Context) error {
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	skills, err := b.opts.Load(ctx)
	if err != nil {
		return fmt.Errorf("broker: load installed skills: %w", err)
	}
	cat, err := b.registered(ctx, skills)
	if err != nil {
		return err
	}
	snap, problems := buildWith(skills, cat)
	problems = append(problems, snap.execProblems...)
	var pubProblems []string
	snap.published, pubProblems = buildPublished(skills)
	problems = append(problems, pubProblems...)
	b.opts.Decider.SetCapabilities(snap.caps)
	b.snap.Store(snap)
	// The install flow now holds what drift blocked (a skill it blocked
	// is not in the new snapshot); what it re-approved is served again.
	// Every read is verified whatever this set says.
	b.blocked.reset()
	keep := map[string]bool{}
	for _, c := range snap.caps {
		keep[c.target.ID()] = true
	}
	for _, s := range snap.published {
		keep[s.target.ID()] = true
	}
	b.opts.Upstream.Retain(keep)
	for _, p := range problems {
		b.log.WarnContext(ctx, "capability left out", "problem", p)
	}
	return nil
}

// registered adds what applied changes registered to skills (which Load
// returned: the broker's own) and returns the catalog with the registered
// executors.
func (b *Broker) registered(ctx context.Context, skills []Skill) (*executor.Catalog, error) {
	cat := b.opts.Executors.Catalog
	if b.opts.Executors.Registered == nil {
		return cat, nil
	}
	regs, err := b.opts.Executors.Registered(ctx)
	if err != nil {
		return nil, fmt.Errorf("broker: registered executors: %w", err)
	}
	if cat, err = promote.Catalog(cat, regs); err != nil {
		return nil, fmt.Errorf("broker: registered executors: %w", err)
	}
	bySkill := registeredBackends(regs)
	for i := range skills {
		skills[i].Registered = bySkill[skills[i].Key]
	}
	return cat, nil
}

// build compiles the skills into a snapshot with the built-in executor
// catalog.
func build(skills []Skill) (*snapshot, []string) {
	return buildWith(skills, executor.Builtin())
}

// buildWith compiles the skills into a snapshot. Names: a capability is
// offered under the name fixed at its approval (manifest toolName, see
// [capability.AssignToolNames]); one approved before names were fixed (or
// a first_party one) keeps its upstream or shipped tool name unless it
// clashes with a gateway tool, a fixed name or a capability of another
// skill, in which case every clashing one is named "<skill>__<tool>" (the
// skill key with "/" as "--"). An executor with backends takes its name
// from any capability. A capability a backend maps is not offered under
// its own name: agents call the executor.
func buildWith(skills []Skill, cat *executor.Catalog) (*snapshot, []string) {
	var caps []*Capability
	var problems []string
	sort.Slice(skills, func(i, j int) bool { return skills[i].Key < skills[j].Key })
	for _, s := range skills {
		if s.Manifest == nil {
			problems = append(problems, fmt.Sprintf("skill %s: no approved manifest", s.Key))
			continue
		}
		for _, mc := range s.Manifest.Capabilities {
			id := mc.Name()
			if why, blocked := s.Blocked[id]; blocked {
				problems = append(problems, fmt.Sprintf("skill %s: %s blocked: %s", s.Key, id, why))
				continue
			}
			decl, ok := s.Servers[mc.ExtensionID]
			if !ok {
				problems = append(problems, fmt.Sprintf("skill %s: %s: server %q is not declared in mcp.json", s.Key, id, mc.ExtensionID))
				continue
			}
			trust, approvedTrust := orImported(s.Trust), orImported(s.ApprovedTrust)
			target := mcpclient.Target{Skill: s.Key, Digest: s.Digest, Content: s.Content, Server: decl, Dir: s.Dir,
				// A server shares the host's network (when confined) only
				// if an approved capability of it declares network egress.
				Trust: trust, Network: s.Manifest.Networked(mc.ExtensionID)}
			var tool *mcp.Tool
			var schema *jsonschema.Schema
			var err error
			var creds []string
			if trust == capability.TrustFirstParty {
				// Shipped, not pinned: the manifest describes the tool.
				target.Unpinned = true
				tool, schema, err = toolFromManifest(mc)
				creds = decl.Credentials()
				sort.Strings(creds)
			} else {
				pins := s.Pins[mc.ExtensionID]
				pin, ok := pins.Lookup(mc.CapabilityID)
				if !ok {
					problems = append(problems, fmt.Sprintf("skill %s: %s has no approved pin", s.Key, id))
					continue
				}
				target.Pins, target.LeftOut = pins, s.LeftOut[mc.ExtensionID]
				tool, schema, err = toolFromPin(pin)
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("skill %s: %s: %v", s.Key, id, err))
				continue
			}
			caps = append(caps, &Capability{
				Skill: s.Key, Capability: mc, Name: mc.CapabilityID, Tool: tool, schema: schema,
				emptyErr:  schema.Validate(map[string]any{}),
				SkillTier: s.Tier, InvokableBy: s.InvokableBy, Trust: trust, ApprovedTrust: approvedTrust, Credentials: creds,
				target: target,
			})
		}
	}
	// Names fixed at the approval of an imported skill (manifest
	// toolName) are kept as they are: they never depend on which other
	// skills are enabled. The others (first_party skills, named by their
	// shipped toolName or their tool, and imported skills approved before
	// names were fixed) keep that name unless it clashes with a gateway
	// tool, a fixed name or another such capability of another skill; then
	// every clashing one is namespaced.
	isFixed := func(c *Capability) bool { return c.Capability.ToolName != "" && c.Trust != capability.TrustFirstParty }
	fixed := map[string]bool{}
	for _, c := range caps {
		if c.Capability.ToolName != "" {
			c.Name = c.Capability.ToolName
			fixed[c.Name] = fixed[c.Name] || isFixed(c)
		}
	}
	es, execProblems := buildExecutors(cat, skills, caps)
	count := map[string]map[string]bool{}
	for _, c := range caps {
		if isFixed(c) {
			continue
		}
		if count[c.Name] == nil {
			count[c.Name] = map[string]bool{}
		}
		count[c.Name][c.Skill] = true
	}
	for _, c := range caps {
		// An executor with a backend takes its name even from a fixed one.
		if (!isFixed(c) && (len(count[c.Name]) > 1 || isReserved(c.Name) || fixed[c.Name])) || es.names[c.Name] {
			c.Name = namespaced(c.Skill, c.Name)
		}
	}
	// Within one skill two servers may offer the same tool name too.
	seen := map[string]int{}
	for _, c := range caps {
		seen[c.Name]++
	}
	for _, c := range caps {
		if seen[c.Name] > 1 && !isFixed(c) {
			c.Name = namespaced(c.Skill, c.Capability.ExtensionID+"__"+c.Capability.CapabilityID)
		}
		t := *c.Tool
		t.Name = c.Name
		c.Tool = &t
		c.id = c.Ref().String()
	}
	return &snapshot{caps: caps, exec: es, execProblems: execProblems}, problems
}

func isReserved(name string) bool { return capability.IsReservedName(name) }

// namespaced is [capability.NamespacedTool].
func namespaced(skill, tool string) string { return capability.NamespacedTool(skill, tool) }

// toolFromPin rebuilds the tool definition agents see from the approved
// pin (never from a live listing) and compiles its input schema.
func toolFromPin(pin capability.ToolPin) (*mcp.Tool, *jsonschema.Schema, error) {
	var def struct {
		Name         string               `json:"name"`
		Title        string               `json:"title"`
		Description  string               `json:"description"`
		InputSchema  json.RawMessage      `json:"inputSchema"`
		OutputSchema json.RawMessage      `json:"outputSchema"`
		Annotations  *mcp.ToolAnnotations `json:"annotations"`
	}
	if err := json.Unmarshal(pin.Definition, &def); err != nil {
		return nil, nil, fmt.Errorf("pinned definition: %w", err)
	}
	if len(def.InputSchema) == 0 {
		def.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	var top map[string]any
	if err := json.Unmarshal(def.InputSchema, &top); err != nil || top["type"] != "object" {
		return nil, nil, errors.New(`input schema is not a JSON Schema object with "type": "object"`)
	}
	schema, err := compileSchema(def.InputSchema)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	t := &mcp.Tool{Name: def.Name, Title: def.Title, Description: def.Description, InputSchema: def.InputSchema, Annotations: def.Annotations}
	if len(def.OutputSchema) > 0 {
		t.OutputSchema = def.OutputSchema
	}
	return t, schema, nil
}

// toolFromManifest builds the tool definition agents see of a first_party
// capability from its shipped manifest entry, and compiles its input
// schema.
func toolFromManifest(mc manifest.Capability) (*mcp.Tool, *jsonschema.Schema, error) {
	def := map[string]any{"name": mc.CapabilityID}
	if mc.Title != "" {
		def["title"] = mc.Title
	}
	if mc.Description != "" {
		def["description"] = mc.Description
	}
	if len(mc.InputSchema) > 0 {
		def["inputSchema"] = mc.InputSchema
	}
	if len(mc.OutputSchema) > 0 {
		def["outputSchema"] = mc.OutputSchema
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return nil, nil, fmt.Errorf("shipped definition: %w", err)
	}
	return toolFromPin(capability.ToolPin{Name: mc.CapabilityID, Definition: raw})
}

// orImported is t, or imported when t is empty.
func orImported(t capability.Trust) capability.Trust {
	if t == "" {
		return capability.TrustImported
	}
	return t
}

// compileSchema compiles a pinned tool's input schema.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	return capability.CompileSchema("skillgate:tool-input.json", raw)
}

// dormant returns the credentials of c's server not configured for p: a
// first_party capability is dormant for p while there is one.
func (b *Broker) dormant(ctx context.Context, p capability.Principal, c *Capability) []string {
	if len(c.Credentials) == 0 || b.opts.Configured == nil {
		return nil
	}
	return b.opts.Configured(ctx, p, c.Skill, c.Credentials)
}

// Tools implements [mcpserver.CapabilitySource]: the capabilities in p's
// scope that no backend maps, under their names, and the executors live
// for p, each with the provider argument's enum of its live providers. A
// dormant executor is not listed, nor a first_party capability dormant for p.
func (b *Broker) Tools(ctx context.Context, p capability.Principal) ([]*mcp.Tool, error) {
	scope := b.opts.Decider.Scope(p)
	es := b.snap.Load().exec
	out := make([]*mcp.Tool, 0, len(scope))
	for _, c := range scope {
		if es != nil && es.mapped[c.ID()] {
			continue
		}
		if len(b.dormant(ctx, p, c)) > 0 {
			continue
		}
		out = append(out, c.Tool)
	}
	out = append(out, b.executorTools(es, p, scope)...)
	sortTools(out)
	return out, nil
}

// Capabilities returns every capability of the current snapshot, whoever
// may call it.
func (b *Broker) Capabilities() []*Capability { return b.snap.Load().caps }

// Call implements [mcpserver.CapabilitySource]: it decides the call at once
// and, when it is allowed, forwards it; done receives the tools/call result
// as JSON, exactly once: the upstream server's own bytes, or a tool error
// saying why the call was refused or failed. The result is valid only
// while done runs (see [mcpclient.ResultFunc]). A refusal is audited before
// done runs; the record of a call the server answered is queued once done
// has returned, on the goroutine that read the result ([Broker.Drain]
// waits for it).
func (b *Broker) Call(ctx context.Context, who capability.Caller, name string, rawArgs json.RawMessage, done func(result json.RawMessage)) {
	var a admission
	if es := b.snap.Load().exec; es != nil && es.names[name] {
		a = b.admitExecutor(ctx, es, who, name, rawArgs)
	} else {
		a = b.admit(ctx, who, name, rawArgs)
	}
	if a.refusal != "" {
		done(toolErrorJSON(a.refusal))
		return
	}
	b.forwarding.Add(1)
	b.opts.Upstream.Call(ctx, who.Principal, a.c.target, a.c.Capability.CapabilityID, a.args, func(res json.RawMessage, err error) {
		defer b.forwarding.Add(-1)
		if err != nil {
			done(toolErrorJSON(b.failed(ctx, a, name, err)))
			return
		}
		if len(res) == 0 || res[0] != '{' {
			done(toolErrorJSON(b.failed(ctx, a, name, fmt.Errorf("%w: the result is not a JSON object", mcpclient.ErrServerError))))
			return
		}
		if a.result != nil {
			mapped, err := a.result.Apply(ctx, res)
			if err != nil {
				done(toolErrorJSON(b.failed(ctx, a, name, fmt.Errorf("%w: %w", mcpclient.ErrServerError, err))))
				return
			}
			res = mapped
		}
		if b.durable != nil {
			// The agent is told of the call only once its record is
			// committed: a process killed before then loses a call the
			// agent never saw succeed, never one it did. The wait is
			// not on this goroutine, which reads the results of every
			// call to the server: res is valid only until we return.
			out := bytes.Clone(res)
			committed, err := b.allowedDurable(a)
			b.forwarding.Add(1)
			go func() {
				defer b.forwarding.Add(-1)
				if err == nil {
					err = <-committed
				}
				if err != nil {
					b.log.ErrorContext(ctx, "audit record not committed; the call's result is withheld", "capability", a.rec.Subject, "err", err)
					done(toolErrorJSON("the call ran, but its audit record could not be stored, so its result is withheld; ask an operator to check the audit log"))
					return
				}
				done(out)
			}()
			return
		}
		// The result goes to the agent before the record is queued: queuing
		// wakes the audit writer, whose work (and the thread it wakes on a
		// machine of few cores) would otherwise run while the result is
		// still being passed on. The record is the same; only its latency
		// now includes passing the result on.
		done(res)
		b.allowed(ctx, a)
	})
}

// Drain waits until every call forwarded so far has its audit record
// queued, or until ctx ends. Close the upstream pool first, so that no
// call waits for a server, then drain, then close the audit writer: no
// record is lost.
func (b *Broker) Drain(ctx context.Context) error {
	for b.forwarding.Load() > 0 {
		t := time.NewTimer(time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("broker: %d calls not yet audited: %w", b.forwarding.Load(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// admission is a call that was looked up, validated and decided.
type admission struct {
	start   time.Time
	rec     audit.Record
	c       *Capability
	args    json.RawMessage
	refusal string // the tool error text when the call is refused
	release func(context.Context) error
	// data is the record's Data (sealed into it when it is recorded):
	// the executor, backend and provider of an executor call, the
	// approval command, the upstream error.
	data map[string]any
	// result, for an executor call whose backend declares one, maps the
	// tool's result to the executor's.
	result *executor.ResultMapping
}

// admit does everything before forwarding: scope lookup, argument
// validation, decision. A refusal is audited here; an allowed call is
// audited when its outcome is known ([Broker.allowed], [Broker.failed]).
func (b *Broker) admit(ctx context.Context, who capability.Caller, name string, rawArgs json.RawMessage) admission {
	start := b.opts.Now()
	p := who.Principal
	a := admission{start: start, rec: audit.Record{
		Time: start, Actor: "agent:" + p.Tenant + "/" + p.Agent, Session: who.SessionID,
		Action: "capability.invoke", Subject: name,
	}}
	if len(rawArgs) == 0 || string(rawArgs) == "null" {
		rawArgs = json.RawMessage("{}")
	}
	a.args = rawArgs
	if h, err := audit.HashArgs(rawArgs); err == nil {
		a.rec.ArgsHash = h
	}
	refuse := func(effect capability.Effect, reasons []string, msg string) admission {
		a.rec.Decision, a.rec.Reasons = effect, reasons
		a.rec.LatencyNS = b.opts.Now().Sub(start).Nanoseconds()
		b.record(ctx, a.rec)
		a.refusal = msg
		return a
	}
	c := b.opts.Decider.Find(p, name)
	if es := b.snap.Load().exec; c != nil && es != nil && es.mapped[c.ID()] {
		c = nil // served as an executor only
	}
	if c == nil {
		return refuse(capability.Deny, []string{"not in scope: no capability named " + name + " for " + p.String()},
			fmt.Sprintf("skillgate: unknown tool %q: it is not among the capabilities you may call", name))
	}
	if missing := b.dormant(ctx, p, c); len(missing) > 0 {
		// Not listed for p: for the agent it does not exist.
		a.rec.Subject = c.ID()
		return refuse(capability.Deny, []string{"dormant: credentials not configured for " + p.String() + ": " + strings.Join(missing, ", ")},
			fmt.Sprintf("skillgate: unknown tool %q: it is not among the capabilities you may call", name))
	}
	a.c = c
	a.rec.Subject = c.ID()
	args, err := decodeArgs(rawArgs)
	if err != nil {
		return refuse(capability.Deny, []string{"invalid arguments: not a JSON object"},
			fmt.Sprintf("skillgate: invalid arguments for %s: they must be a JSON object (%v)", name, err))
	}
	if args == nil {
		return refuse(capability.Deny, []string{"invalid arguments: not a JSON object"},
			fmt.Sprintf("skillgate: invalid arguments for %s: they must be a JSON object", name))
	}
	if err := c.validate(args); err != nil {
		return refuse(capability.Deny, []string{"invalid arguments: " + oneLine(err)},
			fmt.Sprintf("skillgate: invalid arguments for %s: %s", name, oneLine(err)))
	}
	b.decide(ctx, &a, who, c, name, args)
	return a
}

// decide asks the decider about a call of c with args and completes the
// admission: allowed, or refused (and audited) with the reasons.
func (b *Broker) decide(ctx context.Context, a *admission, who capability.Caller, c *Capability, name string, args map[string]any) {
	p := who.Principal
	refuse := func(effect capability.Effect, reasons []string, msg string) {
		a.rec.Decision, a.rec.Reasons = effect, reasons
		a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
		a.seal()
		b.record(ctx, a.rec)
		a.refusal = msg
	}
	d := b.opts.Decider.Decide(ctx, p, who.SessionID, c, args)
	switch d.Effect {
	case capability.Allow:
	case capability.RequireApproval:
		if d.Approve != "" {
			if a.data == nil {
				a.data = map[string]any{}
			}
			a.data["approve"] = d.Approve
			b.log.WarnContext(ctx, "capability call needs a human's approval", "principal", p.String(), "session", who.SessionID,
				"capability", c.ID(), "approve", d.Approve)
		}
		msg := fmt.Sprintf("skillgate: %s needs a human's approval before you may call it: %s. Ask a human operator to approve it; the request is recorded for them.", name, strings.Join(d.told(), "; "))
		refuse(capability.RequireApproval, d.Reasons, msg)
		return
	default:
		msg := fmt.Sprintf("skillgate: call to %s denied: %s.", name, strings.Join(d.told(), "; "))
		refuse(capability.Deny, d.Reasons, msg)
		return
	}
	a.rec.Decision, a.rec.Reasons = capability.Allow, d.Reasons
	a.release = d.Release
}

// decodeArgs decodes a call's arguments, numbers kept as json.Number. A
// nil map with a nil error means they were JSON null. The empty object,
// which every call of a tool without parameters sends, needs no decoder.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	if string(bytes.Trim(raw, " \t\r\n")) == "{}" { // JSON's whitespace only
		return map[string]any{}, nil
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the object")
	}
	return args, nil
}

// allowed audits an allowed call that the upstream server answered.
func (b *Broker) allowed(ctx context.Context, a admission) {
	a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
	a.seal()
	b.record(ctx, a.rec)
}

// allowedDurable audits an allowed call that the server answered; the
// channel receives the outcome of the record's commit.
func (b *Broker) allowedDurable(a admission) (<-chan error, error) {
	a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
	a.seal()
	return b.durable.RecordCommitted(a.rec)
}

// failed audits an allowed call whose forwarding failed and returns the tool
// error text for the agent. A call the upstream connection refused because
// the live tool no longer matches its approved pin (or could not be
// re-checked) never ran: it is audited as denied for drift.
//
// A call that never reached the server (mcpclient.ErrNotSent: a missing
// credential, a server that does not start, drift) gives back the grant use
// its decision consumed, so a one-use grant still serves the call that
// reaches the server.
func (b *Broker) failed(ctx context.Context, a admission, name string, err error) string {
	a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
	released := false
	if a.release != nil && errors.Is(err, mcpclient.ErrNotSent) {
		if rerr := a.release(ctx); rerr != nil {
			b.log.ErrorContext(ctx, "grant use not given back", "capability", a.rec.Subject, "err", rerr)
		} else {
			released = true
		}
	}
	if a.data == nil {
		a.data = map[string]any{}
	}
	if errors.Is(err, mcpclient.ErrToolBlocked) || errors.Is(err, mcpclient.ErrRecheckFailed) {
		a.rec.Decision, a.rec.Reasons = capability.Deny, []string{"drift: " + oneLine(err)}
		if released {
			a.data["grantReleased"] = true
		}
		a.seal()
		b.record(ctx, a.rec)
		b.log.WarnContext(ctx, "call refused for drift", "capability", a.rec.Subject, "err", err)
		return fmt.Sprintf("skillgate: %s was refused: the server's tool no longer matches the definition an operator approved (drift); an operator must review it (skillgate review) before it can be called again", name)
	}
	a.data["upstreamError"] = oneLine(err)
	if released {
		a.data["grantReleased"] = true
	}
	a.seal()
	b.record(ctx, a.rec)
	b.log.WarnContext(ctx, "upstream call failed", "capability", a.rec.Subject, "err", err)
	if errors.Is(err, mcpclient.ErrNotSent) {
		return fmt.Sprintf("skillgate: %s was allowed but never reached its server: %s", name, oneLine(err))
	}
	return fmt.Sprintf("skillgate: %s was allowed but the upstream server failed: %s", name, oneLine(err))
}

func (b *Broker) record(ctx context.Context, r audit.Record) {
	if b.opts.Audit == nil {
		return
	}
	if err := b.opts.Audit.Record(r); err != nil {
		b.log.ErrorContext(ctx, "audit record failed", "err", err)
	}
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// toolErrorJSON is toolError as a tools/call result in JSON.
func toolErrorJSON(msg string) json.RawMessage {
	b, _ := json.Marshal(toolError(msg))
	return b
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}
