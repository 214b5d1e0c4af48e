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
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
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
	// Policy are the reasons as the policy engine gave them (the deciding
	// policies' ids, the grant's), for traces; nil when the decider has
	// none.
	Policy []policy.Reason
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
	// Tracer, when tracing is on, gets the decision's attributes on the
	// span of the request that made the call and a client span per call
	// forwarded upstream (see package telemetry); nil: off.
	Tracer *telemetry.Tracer
}

// Broker implements [mcpserver.CapabilitySource]. It is safe for concurrent
// use; Reload swaps an immutable snapshot.
type Broker struct {
	opts Options
	log  *slog.Logger
	snap atomic.Pointer[snapshot]
	// base is the executor catalog set by SetCatalog, nil for
	// Options.Executors.Catalog.
	base atomic.Pointer[executor.Catalog]
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
