package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// preApproval are the states analysis may (re)start from.
var preApproval = []store.InstallState{store.StatePendingInstall, store.StateAnalyzing, store.StateBlocked, store.StateAwaitingApproval}

// analyzeLocked runs the analysis of in: introspection of every declared
// server, the proposal and its validation, and the verdict. The caller
// holds the storage lock.
func (s *Service) analyzeLocked(ctx context.Context, in store.Install, actor, reason string, intro Introspection) (*Review, error) {
	out, err := s.transition(ctx, "analyze-start", transition{Digest: in.Digest, From: preApproval, To: store.StateAnalyzing,
		Actor: actor, Reason: reason})
	if err != nil {
		return nil, err
	}
	in = out[0]
	var prevOverrides []manifest.Override
	if len(in.Report) > 0 {
		if old, err := manifest.ParseReport(in.Report); err == nil {
			prevOverrides = old.Overrides
		}
	}
	rep, err := s.analyze(ctx, in, nil, intro, nil)
	if err != nil {
		return nil, err
	}
	rep.Overrides = prevOverrides
	rep.Suppressions = suppressionsOf(in.Report)
	finish(rep)
	proposed, err := proposedManifest(in, rep)
	if err != nil {
		return nil, err
	}
	s.crash("analyze-after-introspect")
	return s.commitVerdict(ctx, in, rep, proposed, actor, "analyze")
}

// commitVerdict records rep as the install's report and moves it to blocked
// or awaiting_approval accordingly.
func (s *Service) commitVerdict(ctx context.Context, in store.Install, rep *manifest.Report, proposed json.RawMessage, actor, point string) (*Review, error) {
	action := ""
	if point == "complete" {
		action = "install.complete"
	}
	return s.commitVerdictAs(ctx, in, rep, proposed, actor, point, action, nil)
}

// commitVerdictAs is commitVerdict with the audit record's action (empty:
// the transition's own) and data.
func (s *Service) commitVerdictAs(ctx context.Context, in store.Install, rep *manifest.Report, proposed json.RawMessage, actor, point, action string, data map[string]any) (*Review, error) {
	repJSON, err := manifest.Marshal(rep)
	if err != nil {
		return nil, err
	}
	to, why := store.StateAwaitingApproval, "ready for approval: every proposed capability has complete risk metadata"
	if rep.Validation.Blocked {
		to, why = store.StateBlocked, "blocked: "+strings.Join(rep.Validation.Reasons, "; ")
	}
	rj := json.RawMessage(repJSON)
	return s.commit(ctx, point, transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: to,
		Actor: actor, Reason: why, Action: action, Change: store.InstallChange{Proposed: &proposed, Report: &rj}, Data: data})
}

// analyze introspects every server of in and drafts a report. With keep
// non-nil the proposal is taken from keep instead of calling the proposer
// (re-analysis of an approved version: the runtime never proposes).
//
// intro is what the operator allows the servers. The servers of a version
// not approved (approved nil) run in the install sandbox, when there is
// one, unless intro.Unconfined. Those of an approved version run as calls
// run them: every credential, and the run-time sandbox (Options.Runtime)
// with the state directory, grants and limits of run time and the network
// only where the approved manifest declares network egress (or
// intro.Network). Either way a server whose declaration names a path that
// would expose a hidden one is not started (phase "grants"), and each
// server's grants are recorded for the review.
func (s *Service) analyze(ctx context.Context, in store.Install, keep *manifest.ProposalReport, intro Introspection, approved *manifest.Manifest) (*manifest.Report, error) {
	tree := filepath.Join(in.Dir, SkillDir)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	skillMD, file, err := skill.ReadFile(tree)
	if file == "" {
		return nil, fmt.Errorf("%w: %s: %s has no SKILL.md", ErrStorage, in.Key, tree)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	// The managed directory is named SkillDir, not after the skill: the
	// name check uses the skill's own name, so that it does not warn
	// "Directory name 'skill' must match skill name" for every install.
	sk := skill.Parse(skillMD, in.Name, skill.Options{Mode: skill.Lenient})
	cfg := &mcpclient.Config{}
	if b, err := os.ReadFile(filepath.Join(tree, MCPConfigFile)); err == nil {
		if cfg, err = mcpclient.ParseConfig(b); err != nil {
			return nil, fmt.Errorf("%w: %s/%s: %w", ErrInvalidSkill, in.Key, MCPConfigFile, err)
		}
	}
	rep := &manifest.Report{Schema: manifest.SchemaReport, SkillID: in.Key, Version: in.Digest, AnalyzedAt: s.now().UTC(),
		Servers: []manifest.ServerResult{}, Capabilities: []manifest.CapabilityReport{}, Overrides: []manifest.Override{}}
	rep.Skill = manifest.SkillSummary{Name: in.Name, Description: in.Description, Category: in.Category, Tier: in.Tier,
		InvokableBy: in.InvokableBy, AllowedTools: sk.AllowedTools, Warnings: sk.Warnings()}

	pkgs, err := packagesOf(in)
	if err != nil {
		return nil, err
	}

	// Introspect the servers in parallel: each is bounded by its limits.
	results := make([]*mcpclient.ServerReport, len(cfg.Servers))
	errs := make([]error, len(cfg.Servers))
	grants := make([][]capability.Grant, len(cfg.Servers))
	hide, confined := s.hidden()
	var wg sync.WaitGroup
	for i, decl := range cfg.Servers {
		decl, opts, g, err := s.prepareServer(ctx, in, decl, pkgs, serverSetup{hide: hide, confined: confined, intro: intro, approved: approved})
		grants[i] = g
		if err != nil {
			errs[i] = err
			continue
		}
		wg.Add(1)
		s.step("introspecting server %s", decl.ID)
		go func() {
			defer wg.Done()
			results[i], errs[i] = mcpclient.Introspect(ctx, decl, &opts)
		}()
	}
	wg.Wait()
	var caps []mcpclient.Capability
	var published []publishedText
	for i, decl := range cfg.Servers {
		if errs[i] != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c, p := addServer(rep, in.Key, decl, grants[i], results[i], errs[i])
		caps = append(caps, c...)
		published = append(published, p...)
	}
	sort.Slice(rep.Capabilities, func(i, j int) bool { return rep.Capabilities[i].Name() < rep.Capabilities[j].Name() })
	s.step("scanning the content of %s", in.Key)
	if rep.Scan, err = scanContent(ctx, in.Key, tree, caps, published); err != nil {
		return nil, err
	}
	if err := s.deriveContent(ctx, in.Key, tree, rep.Scan); err != nil {
		return nil, err
	}

	// Layer 3 (format) checks the backends file against the tools found.
	if rep.Backends, err = backendsCheck(s.executorCatalog(), in.Key, tree, rep); err != nil {
		return nil, err
	}

	if keep != nil {
		rep.Proposal = *keep
		return rep, nil
	}
	pin := propose.Input{Skill: in.Key, SkillMD: skillMD, AllowedTools: sk.AllowedTools, Tools: propose.ToolsFromCapabilities(caps)}
	rep.Proposal = s.propose(ctx, pin)
	proposeMapped(rep)
	return rep, nil
}

// serverSetup is what confining and crediting every declared server of one
// analysis shares.
type serverSetup struct {
	// hide are the host paths no server may see; confined says whether
	// stdio servers run in the sandbox.
	hide     []string
	confined bool
	intro    Introspection
	// approved is the approved manifest of a re-analysis, nil for a first
	// one.
	approved *manifest.Manifest
}

// prepareServer readies one declared server for introspection: the pinned
// package it launches, the grants it is confined with (refused here as they
// would be at run time, before anything starts and before anyone approves),
// its sandbox, and the credentials it may see. An error is the server's
// failure, recorded in the report; the grants are returned with it once
// known.
func (s *Service) prepareServer(ctx context.Context, in store.Install, decl mcpclient.ServerDecl, pkgs []launch.Package, su serverSetup) (mcpclient.ServerDecl, mcpclient.Options, []capability.Grant, error) {
	tree := filepath.Join(in.Dir, SkillDir)
	opts := s.mcp
	opts.Dir = tree
	// A launched package runs from its pinned tree, offline; one
	// changed since it was fetched is not started.
	decl, err := withExec(in, decl, pkgs, true)
	if err != nil {
		return decl, opts, nil, &mcpclient.ServerError{ServerID: decl.ID, Phase: "package", Err: err}
	}
	if err := s.checkPackage(ctx, decl); err != nil {
		return decl, opts, nil, &mcpclient.ServerError{ServerID: decl.ID, Phase: "package", Err: err}
	}
	var binds []string
	var declared, grants []capability.Grant
	if decl.Exec != nil {
		binds = decl.Exec.Binds
	}
	if su.confined && decl.Transport == capability.TransportStdio {
		// The grants of run time, refused here as they would be
		// then: before anything starts, and before anyone approves.
		g, err := sandbox.Grants(sandbox.Declaration{Args: decl.Args, Env: decl.Env, Dir: tree}, su.hide)
		if err != nil {
			return decl, opts, nil, &mcpclient.ServerError{ServerID: decl.ID, Phase: "grants", Err: err}
		}
		declared = g
		// What its program's interpreter needs bound (one installed
		// under a home directory), refused here as at run time.
		if program, ok := programOf(decl); ok {
			ig, err := sandbox.Interpreters(program, literalEnv(decl.Env), su.hide, append([]string{tree}, binds...))
			if err != nil {
				return decl, opts, nil, &mcpclient.ServerError{ServerID: decl.ID, Phase: "grants", Err: err}
			}
			g = append(slices.Clip(g), ig...)
		}
		for _, b := range binds {
			g = append(g, capability.Grant{Path: b, Access: capability.GrantReadOnly, From: "the fetched package"})
		}
		grants = g
	}
	approved, intro := su.approved, su.intro
	network := intro.Network || (approved != nil && approved.Networked(decl.ID))
	switch {
	case intro.Unconfined:
	case approved != nil && s.runtime != nil:
		b, err := s.runtime.Confiner(sandbox.Server{Skill: in.Key, Version: in.Digest, Network: network,
			Dir: tree, Args: decl.Args, Env: decl.Env, Binds: binds})
		if err != nil {
			return decl, opts, grants, &mcpclient.ServerError{ServerID: decl.ID, Phase: "start", Err: err}
		}
		if b != nil { // a nil *Bubblewrap must not become a non-nil Confiner
			opts.Confine = b
		}
	case s.sandbox != nil:
		sb := *s.sandbox
		sb.Network = network
		sb.Binds = binds
		if decl.Exec != nil {
			// The grants come from the declaration, not from the
			// command the package runs as (its program lies in the
			// hidden data directory, bound by Binds).
			sb.Grants = readOnly(declared)
		}
		opts.Confine = sb
	}
	if approved == nil {
		if withheld := withheldCredentials(decl, intro.Credentials); len(withheld) > 0 {
			return decl, opts, grants, &mcpclient.ServerError{ServerID: decl.ID, Phase: "credentials", Err: fmt.Errorf("%w: %s",
				ErrCredentialWithheld, withheldMessage(in.Key, withheld))}
		}
		opts.Credentials = onlyCredentials(s.mcp.Credentials, intro.Credentials)
		if unset := unsetCredentials(decl, opts.Credentials); len(unset) > 0 {
			return decl, opts, grants, &mcpclient.ServerError{ServerID: decl.ID, Phase: "credentials", Err: fmt.Errorf("%w: %s",
				ErrCredentialUnset, unsetMessage(unset))}
		}
	}
	if s.bearer != nil && mcpclient.BearerTarget(decl) {
		tok, err := s.bearer(decl)
		if err != nil {
			return decl, opts, grants, &mcpclient.ServerError{ServerID: decl.ID, Phase: "credentials", Err: err}
		}
		if tok != "" {
			base := opts.Credentials
			opts.Credentials = func(name string) (string, bool) {
				if name == mcpclient.BearerCredential {
					return tok, true
				}
				if base == nil {
					return "", false
				}
				return base(name)
			}
		}
	}
	return decl, opts, grants, nil
}

// addServer records one server's introspection in rep: its failure (the
// phase it failed in and its stderr), or its identity, pins, tools and the
// skills it publishes. It returns the server's capabilities and published
// texts, for the content scan and the proposal.
func addServer(rep *manifest.Report, key string, decl mcpclient.ServerDecl, grants []capability.Grant, r *mcpclient.ServerReport, err error) ([]mcpclient.Capability, []publishedText) {
	sr := manifest.ServerResult{ServerID: decl.ID, Declaration: decl.Redacted(), Grants: grants}
	if err != nil {
		f := &manifest.ServerFailure{Phase: "introspect", Message: err.Error()}
		var se *mcpclient.ServerError
		if errors.As(err, &se) {
			f.Phase = se.Phase
		}
		if xe := (*mcpclient.ExitError)(nil); errors.As(err, &xe) {
			f.Stderr = xe.Stderr
		}
		sr.Error = f
		rep.Servers = append(rep.Servers, sr)
		return nil, nil
	}
	var published []publishedText
	id := r.Server
	pins := r.Pins
	sr.Server, sr.ProtocolVersion, sr.RawToolsList, sr.Pins = &id, r.ProtocolVersion, r.RawToolsList, &pins
	sr.ElapsedMS = float64(r.Elapsed.Microseconds()) / 1000
	if r.Skills != nil {
		sr.SkillsExtension, sr.SkillsError = true, r.Skills.Error
		rep.PublishedSkills = append(rep.PublishedSkills, verifyPublished(key, decl.ID, r.Skills)...)
		published = publishedTexts(decl.ID, r.Skills)
	}
	rep.Servers = append(rep.Servers, sr)
	for _, c := range r.Capabilities {
		rep.Capabilities = append(rep.Capabilities, manifest.CapabilityReport{
			Tool: c.Tool, ServerRisk: c.Risk.Risk, Conflicts: c.Risk.Conflicts, Problems: c.Problems, Pin: c.Pin,
		})
	}
	return r.Capabilities, published
}

// hidden returns the paths the sandbox hides besides the fixed ones
// (skillgate's data directory), and whether servers are confined at all
// here: without a sandbox (outside Linux) nothing is granted, because
// nothing is withheld.
func (s *Service) hidden() ([]string, bool) {
	switch {
	case s.runtime != nil:
		return s.runtime.Hide, true
	case s.sandbox != nil:
		return s.sandbox.Hide, true
	}
	return nil, false
}

// propose runs the proposer and validates its draft. A failing proposer
// falls back to the deterministic one, and the failure is reported.
func (s *Service) propose(ctx context.Context, in propose.Input) manifest.ProposalReport {
	pr := manifest.ProposalReport{Capabilities: []string{}, Items: []manifest.ProposedItem{}, Corrections: []manifest.Correction{}}
	draft, err := s.proposer.Propose(ctx, in)
	if err != nil {
		pr.Error = err.Error()
		s.log.Warn("install: proposer failed; using the deterministic proposal", "skill", in.Skill, "err", err)
		draft, err = propose.Deterministic{}.Propose(ctx, in)
		if err != nil {
			pr.Error += "; deterministic: " + err.Error()
			return pr
		}
	}
	valid, corrections := propose.Validate(draft, in, constraintParser)
	pr.Proposer = valid.Proposer
	for _, c := range valid.Capabilities {
		pr.Capabilities = append(pr.Capabilities, c.ExtensionID+"/"+c.CapabilityID)
	}
	pr.Items = []manifest.ProposedItem{}
	for _, it := range valid.Capabilities {
		pr.Items = append(pr.Items, manifest.ProposedItem{ExtensionID: it.ExtensionID, CapabilityID: it.CapabilityID, Reason: it.Reason, Constraints: it.Constraints})
	}
	pr.PolicyHints = valid.PolicyHints
	for _, c := range corrections {
		name := ""
		if c.ExtensionID != "" || c.CapabilityID != "" {
			name = c.ExtensionID + "/" + c.CapabilityID
		}
		msg := c.Detail
		if c.Field != "" {
			msg = strings.TrimSpace(c.Field + ": " + msg)
		}
		pr.Corrections = append(pr.Corrections, manifest.Correction{Kind: c.Kind, Capability: name, Message: msg})
	}
	return pr
}

// proposeMapped adds to rep's proposal the tools its backends file maps
// (a provider skill's tools serve executors whatever SKILL.md names), each
// with the executor it serves as the reason. A file that does not compile
// adds nothing: it blocks the install.
func proposeMapped(rep *manifest.Report) {
	if rep.Backends == nil || rep.Backends.Error != "" {
		return
	}
	for _, m := range rep.Backends.Maps {
		name, ex, _ := strings.Cut(m, "=")
		if slices.Contains(rep.Proposal.Capabilities, name) {
			continue
		}
		ext, capID, _ := strings.Cut(name, "/")
		rep.Proposal.Capabilities = append(rep.Proposal.Capabilities, name)
		rep.Proposal.Items = append(rep.Proposal.Items, manifest.ProposedItem{ExtensionID: ext, CapabilityID: capID,
			Reason: "mapped by " + executor.BackendsFileName + " to executor " + ex})
	}
}

// finish computes the effective risk of every capability from the server's
// and the operator's values, each capability's status, and the verdict.
func finish(rep *manifest.Report) {
	if rep.Overrides == nil {
		rep.Overrides = []manifest.Override{}
	}
	proposed := map[string]bool{}
	for _, n := range rep.Proposal.Capabilities {
		proposed[n] = true
	}
	var missing, problems []string
	for i := range rep.Capabilities {
		c := &rep.Capabilities[i]
		c.Risk = c.ServerRisk
		for _, o := range rep.Overrides {
			if o.Capability == c.Name() {
				applyOverride(&c.Risk, o)
			}
		}
		c.Proposed = proposed[c.Name()]
		c.Blockers = nil
		if u := c.Risk.Unknown(); len(u) > 0 {
			c.Blockers = append(c.Blockers, "missing risk metadata: "+strings.Join(u, ", "))
		}
		for _, p := range c.Problems {
			c.Blockers = append(c.Blockers, fmt.Sprintf("%s: %s", p.Field, p.Message))
		}
		c.Status = manifest.StatusReady
		if len(c.Blockers) > 0 {
			c.Status = manifest.StatusBlocked
			if c.Proposed {
				if len(c.Risk.Unknown()) > 0 {
					missing = append(missing, c.Name())
				}
				if len(c.Problems) > 0 {
					problems = append(problems, c.Name())
				}
			}
		}
	}
	v := manifest.Validation{Reasons: []string{}}
	for _, sr := range rep.Servers {
		if sr.Error != nil {
			v.Reasons = append(v.Reasons, fmt.Sprintf("server %s failed (%s): %s", sr.ServerID, sr.Error.Phase, sr.Error.Message))
		}
	}
	if len(missing) > 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%d %s risk metadata (%s); run skillgate complete %s CAPABILITY --risk … --side-effects … --egress … --why \"…\"",
			len(missing), plural.Noun(len(missing), "capability lacks", "capabilities lack"), strings.Join(missing, ", "), rep.SkillID))
	}
	if len(problems) > 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%d %s (%s); the server must fix them, or approve without them with --only",
			len(problems), plural.Noun(len(problems), "capability has an invalid definition", "capabilities have invalid definitions"), strings.Join(problems, ", ")))
	}
	if r := backendsReason(rep); r != "" {
		v.Reasons = append(v.Reasons, r)
	}
	applySuppressions(rep)
	if r := contentReason(rep.SkillID, blockingFindings(rep)); r != "" {
		v.Reasons = append(v.Reasons, r)
	}
	v.Blocked = len(v.Reasons) > 0
	rep.Validation = v
	rep.Layers = layers(rep, len(rep.Pins) > 0)
}

// applyOverride sets one operator-supplied field.
func applyOverride(r *capability.Risk, o manifest.Override) {
	switch o.Field {
	case "riskLevel":
		r.RiskLevel = capability.RiskField[capability.RiskLevel]{Value: capability.RiskLevel(o.Value), Source: capability.SourceOperator, Basis: o.Why}
	case "sideEffects":
		r.SideEffects = capability.RiskField[capability.SideEffects]{Value: capability.SideEffects(o.Value), Source: capability.SourceOperator, Basis: o.Why}
	case "dataEgress":
		r.DataEgress = capability.RiskField[capability.DataEgress]{Value: capability.DataEgress(o.Value), Source: capability.SourceOperator, Basis: o.Why}
	}
}

// proposedManifest renders manifest.proposed.json from a report.
func proposedManifest(in store.Install, rep *manifest.Report) (json.RawMessage, error) {
	m := buildManifest(in, rep, rep.Proposal.Capabilities, nil)
	b, err := manifest.Marshal(m)
	return json.RawMessage(b), err
}

// buildManifest renders a manifest of the named capabilities; pins, when
// set, are recorded per provider.
func buildManifest(in store.Install, rep *manifest.Report, names []string, pins map[string]capability.PinSet) *manifest.Manifest {
	m := &manifest.Manifest{Schema: manifest.SchemaManifest, SkillID: in.Key, Version: in.Digest, VersionLabel: in.Label,
		Providers: []manifest.Provider{}, Capabilities: []manifest.Capability{}}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	items := map[string]manifest.ProposedItem{}
	for _, it := range rep.Proposal.Items {
		items[it.ExtensionID+"/"+it.CapabilityID] = it
	}
	used := map[string]bool{}
	for _, c := range rep.Capabilities {
		if !want[c.Name()] {
			continue
		}
		it := items[c.Name()]
		m.Capabilities = append(m.Capabilities, manifest.Capability{ExtensionID: c.ExtensionID, CapabilityID: c.CapabilityID,
			Title: c.Title, Risk: c.Risk, InputSchema: c.InputSchema, OutputSchema: c.OutputSchema,
			Constraints: it.Constraints, Rationale: it.Reason})
		used[c.ExtensionID] = true
	}
	for _, sr := range rep.Servers {
		if !used[sr.ServerID] {
			continue
		}
		p := manifest.Provider{Type: "mcp", ServerID: sr.ServerID, Server: sr.Server}
		if ps, ok := pins[sr.ServerID]; ok {
			p.PinDigest = ps.Digest()
		}
		m.Providers = append(m.Providers, p)
	}
	return m
}

// withheldCredentials lists the credentials decl references that are not
// among given.
func withheldCredentials(decl mcpclient.ServerDecl, given []string) []string {
	var out []string
	for _, n := range decl.Credentials() {
		if !slices.Contains(given, n) {
			out = append(out, n)
		}
	}
	return out
}

// withheldMessage tells the operator how to give the withheld credentials.
func withheldMessage(key string, names []string) string {
	flags := ""
	for _, n := range names {
		flags += " --credential " + n
	}
	return fmt.Sprintf("%s not given to the server: a skill not approved yet gets only the credentials an operator names; if you trust it with them, run: skillgate recheck %s%s",
		strings.Join(names, ", "), key, flags)
}

// unsetCredentials lists the credentials decl references that lookup
// does not resolve.
func unsetCredentials(decl mcpclient.ServerDecl, lookup mcpclient.CredentialLookup) []string {
	var out []string
	for _, n := range decl.Credentials() {
		if lookup == nil {
			out = append(out, n)
			continue
		}
		if _, ok := lookup(n); !ok {
			out = append(out, n)
		}
	}
	return out
}

// unsetMessage tells the operator where a given credential may come from.
func unsetMessage(names []string) string {
	n := names[0]
	return fmt.Sprintf("%s given to the server but not set: store it with 'skillgate credential set %s --tenant TENANT' and introspect with --tenant TENANT, "+
		"or, to read it from skillgate's own environment, list it under credentials.from_environment in config.yaml (no other variable of the environment is ever given to a server)",
		strings.Join(names, ", "), n)
}

// onlyCredentials is lookup restricted to names.
func onlyCredentials(lookup mcpclient.CredentialLookup, names []string) mcpclient.CredentialLookup {
	if lookup == nil {
		return nil
	}
	return func(n string) (string, bool) {
		if !slices.Contains(names, n) {
			return "", false
		}
		return lookup(n)
	}
}

// readOnly returns grants with every access read-only (introspection, before
// approval, writes nothing), never nil.
func readOnly(grants []capability.Grant) []capability.Grant {
	out := make([]capability.Grant, 0, len(grants))
	for _, g := range grants {
		g.Access = capability.GrantReadOnly
		out = append(out, g)
	}
	return out
}

// literalEnv is the declared environment values that are no template (a
// PATH the declaration sets), as NAME=value.
func literalEnv(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if !strings.Contains(v, "${") {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}

// programOf returns the absolute path of the program decl starts, found
// on PATH as exec finds it.
func programOf(decl mcpclient.ServerDecl) (string, bool) {
	name := decl.Command
	if decl.Exec != nil {
		name = decl.Exec.Program
	}
	if name == "" {
		return "", false
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", false
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs, true
	}
	return "", false
}
