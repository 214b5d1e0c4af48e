package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Review is everything a human needs to decide about one install: the
// proposal, each capability's risk and where it came from, what is missing,
// what changed since the previous approved version, drift since approval,
// and what to run next. The CLI's --json output and the REST bodies are
// this type, marshalled the same way.
type Review struct {
	Key          string             `json:"key"`
	Name         string             `json:"name"`
	Category     string             `json:"category,omitempty"`
	Digest       string             `json:"digest"`
	VersionLabel string             `json:"versionLabel,omitempty"`
	State        store.InstallState `json:"state"`
	Reason       string             `json:"reason"`
	UpdatedAt    time.Time          `json:"updatedAt"`
	// Dir is the version's managed directory.
	Dir string `json:"dir"`
	// Provenance is where the version came from; Stale is set when the
	// record is for another content digest than this version's.
	Provenance   *Provenance           `json:"provenance,omitempty"`
	Stale        bool                  `json:"provenanceStale,omitempty"`
	Skill        manifest.SkillSummary `json:"skill"`
	Servers      []ServerView          `json:"servers"`
	Capabilities []CapabilityView      `json:"capabilities"`
	Missing      []MissingView         `json:"missing"`
	Proposal     ProposalView          `json:"proposal"`
	Validation   manifest.Validation   `json:"validation"`
	// Layers are the admission layers' verdicts; Scan is layer 4's
	// findings, Suppressions the operator's decisions about them.
	Layers       []manifest.Layer       `json:"layers,omitempty"`
	Scan         *manifest.ScanReport   `json:"scan,omitempty"`
	Suppressions []manifest.Suppression `json:"suppressions,omitempty"`
	Overrides    []manifest.Override    `json:"overrides"`
	// Settings are the operator's constraints and call approval defaults
	// recorded at approval.
	Settings   []manifest.Setting     `json:"settings,omitempty"`
	Proposed   *manifest.Manifest     `json:"proposedManifest,omitempty"`
	Approved   *manifest.Manifest     `json:"approvedManifest,omitempty"`
	Blocked    []BlockedCapability    `json:"blocked"`
	Drift      []manifest.DriftRecord `json:"drift"`
	Reanalysis *manifest.Report       `json:"-"`
	Pending    bool                   `json:"reanalysisPending,omitempty"`
	Previous   *PreviousVersion       `json:"previous,omitempty"`
	Next       []string               `json:"next"`
	// Actions are the operator's decisions valid for the version now
	// ([Actions]); the console offers exactly these.
	Actions []Action `json:"-"`

	// PublishedSkills are the skills the servers publish through the MCP
	// Skills extension, as verified at analysis (after drift, by the
	// re-analysis), each with whether it is approved.
	PublishedSkills []PublishedSkillView `json:"publishedSkills"`
}

// ServerView is one declared server in a review.
type ServerView struct {
	ServerID    string                    `json:"serverId"`
	Declaration capability.RedactedServer `json:"declaration"`
	// Grants are the host paths the server is granted in its sandbox at
	// call time, from its args and literal env values, each with its
	// access: what approving it gives it (package sandbox computes them,
	// and binds exactly these). Credential values are never paths.
	Grants []capability.Grant         `json:"grants"`
	Server *capability.ServerIdentity `json:"serverInfo,omitempty"`
	Tools  int                        `json:"tools"`
	Error  *manifest.ServerFailure    `json:"error,omitempty"`
	// SkillsExtension is set when the server declared the MCP Skills
	// extension; SkillsError when listing its skills failed.
	SkillsExtension bool   `json:"skillsExtension,omitempty"`
	SkillsError     string `json:"skillsError,omitempty"`
}

// PublishedSkillView is one skill a server publishes, in a review.
type PublishedSkillView struct {
	// Ref names it in approve --allow-dynamic and --allow-tools
	// ("serverId/uri").
	Ref         string `json:"ref"`
	ServerID    string `json:"serverId"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Status is ready, dynamic or blocked (see Problems).
	Status   string   `json:"status"`
	Problems []string `json:"problems,omitempty"`
	// Files is how many files it lists; SetDigest identifies them, and
	// approval binds to it.
	Files     int    `json:"files"`
	SetDigest string `json:"setDigest,omitempty"`
	// Approved is set when the approved manifest holds it with the same
	// resource set; Path is then where agents find it
	// (skill://<path>/SKILL.md).
	Approved       bool   `json:"approved"`
	Path           string `json:"path,omitempty"`
	DynamicAllowed bool   `json:"dynamicAllowed,omitempty"`
	// AllowedTools is what its frontmatter asks for; ToolsApproved
	// whether an operator approved it (otherwise it is ignored).
	AllowedTools  []string `json:"allowedTools,omitempty"`
	ToolsApproved bool     `json:"toolsApproved,omitempty"`
	// Notes say what approval will and will not do with it.
	Notes []string `json:"notes,omitempty"`
}

// CapabilityView is one introspected capability in a review.
type CapabilityView struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Proposed    bool            `json:"proposed"`
	Approved    bool            `json:"approved"`
	Status      string          `json:"status"`
	Risk        capability.Risk `json:"risk"`
	// ServerRisk is shown when an operator changed what the server stated.
	ServerRisk *capability.Risk          `json:"serverRisk,omitempty"`
	Conflicts  []capability.RiskConflict `json:"conflicts,omitempty"`
	Blockers   []string                  `json:"blockers,omitempty"`
	// ToolName is the name agents see it under, fixed at approval; empty
	// until approved. ToolNameReason is the clash that approval resolved.
	ToolName       string `json:"toolName,omitempty"`
	ToolNameReason string `json:"toolNameReason,omitempty"`
	// Constraints and CallApproval are what the approval recorded (the
	// operator's settings, else the proposal's constraints), or before
	// approval the proposal's constraints.
	Constraints  json.RawMessage         `json:"constraints,omitempty"`
	CallApproval capability.CallApproval `json:"callApproval,omitempty"`
}

// MissingView is a proposed capability with unknown risk fields.
type MissingView struct {
	Capability string   `json:"capability"`
	Fields     []string `json:"fields"`
}

// ProposalView summarises the proposal.
type ProposalView struct {
	Proposer     string                `json:"proposer"`
	Capabilities []string              `json:"capabilities"`
	Corrections  []manifest.Correction `json:"corrections"`
	Error        string                `json:"error,omitempty"`
}

// BlockedCapability is an approved capability blocked since approval.
type BlockedCapability struct {
	Capability string `json:"capability"`
	Reason     string `json:"reason"`
}

// PreviousVersion is what differs from the previous approved version of the
// same skill.
type PreviousVersion struct {
	Digest  string             `json:"digest"`
	State   store.InstallState `json:"state"`
	Added   []string           `json:"addedCapabilities"`
	Removed []string           `json:"removedCapabilities"`
	// RiskChanges lists capabilities whose effective risk differs.
	RiskChanges []RiskChange `json:"riskChanges"`
	// Pins lists, per server, how this version's tools differ from the
	// previous approved pins.
	Pins []ServerDrift `json:"pins"`
	// ServersAdded and ServersRemoved are the MCP servers (mcp.json ids)
	// this version declares and the previous did not, and the reverse.
	ServersAdded   []string `json:"serversAdded"`
	ServersRemoved []string `json:"serversRemoved"`
	// CredentialsAdded are credentials (${NAME}) this version's servers
	// need that the previous version's did not.
	CredentialsAdded []string `json:"credentialsAdded"`
	// NewEgress lists capabilities that may reach the network now and
	// could not before (added ones included).
	NewEgress []string `json:"newEgress"`
	// Signature is set when who signed the skill changed ("" is unsigned).
	Signature *Change `json:"signature,omitempty"`
	// PublishedSkills lists the skills the servers publish through the
	// MCP Skills extension that were added, removed or changed (files or
	// frontmatter), as "serverId/uri: what".
	PublishedSkills []string `json:"publishedSkillsChanged,omitempty"`
	// Packages lists, per server, how the package it launches differs:
	// version, integrity, dependencies added, removed or changed.
	Packages []PackageChange `json:"packagesChanged,omitempty"`
	// FilesOnly is set when nothing an agent may do changed: only files.
	FilesOnly bool `json:"filesOnly"`
	// DiffDigest identifies this comparison (SHA-256 of its RFC 8785 form
	// without this field): approving the version is consent to it, and
	// the approval's audit record carries it.
	DiffDigest string `json:"diffDigest"`
}

// Change is a value before and after.
type Change struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// RiskChange is one risk field that differs between versions.
type RiskChange struct {
	Capability string `json:"capability"`
	Field      string `json:"field"`
	Before     string `json:"before"`
	After      string `json:"after"`
}

// ServerDrift is a pin difference of one server.
type ServerDrift struct {
	ServerID string           `json:"serverId"`
	Drift    capability.Drift `json:"drift"`
}

// Summary is one line of skillgate pending.
type Summary struct {
	Key       string             `json:"key"`
	Digest    string             `json:"digest"`
	State     store.InstallState `json:"state"`
	Reason    string             `json:"reason"`
	Blocked   int                `json:"blockedCapabilities,omitempty"`
	UpdatedAt time.Time          `json:"updatedAt"`
	Next      []string           `json:"next"`
}

// Review returns the review of the install an operator names.
func (s *Service) Review(ctx context.Context, name string) (*Review, error) {
	in, err := s.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.review(ctx, in)
}

// Pending lists the installs that need a human: interrupted, blocked,
// awaiting approval, and approved ones with blocked capabilities, newest
// first.
func (s *Service) Pending(ctx context.Context) ([]Summary, error) {
	rows, err := s.st.Installs(ctx, store.InstallFilter{})
	if err != nil {
		return nil, err
	}
	out := []Summary{}
	for _, in := range rows {
		switch in.State {
		case store.StateRemoved, store.StateRejected:
			continue
		case store.StateInstalled, store.StateEnabled, store.StateDisabled:
			if len(in.Blocked) == 0 {
				continue
			}
		}
		out = append(out, Summary{Key: in.Key, Digest: in.Digest, State: in.State, Reason: in.Reason, Blocked: len(in.Blocked),
			UpdatedAt: in.UpdatedAt.UTC(), Next: next(in, nil)})
	}
	return out, nil
}

// List returns every install, newest first, as summaries.
func (s *Service) List(ctx context.Context) ([]Summary, error) {
	rows, err := s.st.Installs(ctx, store.InstallFilter{})
	if err != nil {
		return nil, err
	}
	out := []Summary{}
	for _, in := range rows {
		out = append(out, Summary{Key: in.Key, Digest: in.Digest, State: in.State, Reason: in.Reason, Blocked: len(in.Blocked),
			UpdatedAt: in.UpdatedAt.UTC(), Next: next(in, nil)})
	}
	return out, nil
}

func (s *Service) review(ctx context.Context, in store.Install) (*Review, error) {
	r := &Review{Key: in.Key, Name: in.Name, Category: in.Category, Digest: in.Digest, VersionLabel: in.Label, State: in.State,
		Reason: in.Reason, UpdatedAt: in.UpdatedAt.UTC(), Dir: in.Dir, Servers: []ServerView{}, Capabilities: []CapabilityView{},
		Missing: []MissingView{}, PublishedSkills: []PublishedSkillView{}, Overrides: []manifest.Override{}, Blocked: []BlockedCapability{}, Drift: []manifest.DriftRecord{},
		Proposal: ProposalView{Capabilities: []string{}, Corrections: []manifest.Correction{}}, Validation: manifest.Validation{Reasons: []string{}}}
	if len(in.Provenance) > 0 {
		var p Provenance
		if err := json.Unmarshal(in.Provenance, &p); err != nil {
			return nil, fmt.Errorf("%w: %s: provenance: %w", ErrStorage, in.Key, err)
		}
		r.Provenance, r.Stale = &p, p.version() != in.Digest
	}
	var rep *manifest.Report
	if len(in.Report) > 0 {
		var err error
		if rep, err = manifest.ParseReport(in.Report); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
	}
	if len(in.Pending) > 0 {
		p, err := manifest.ParseReport(in.Pending)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: re-analysis: %w", ErrStorage, in.Key, err)
		}
		r.Reanalysis, r.Pending = p, true
	}
	if len(in.Proposed) > 0 {
		m, err := manifest.Parse(in.Proposed)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
		r.Proposed = m
	}
	proposed := map[string]json.RawMessage{}
	if r.Proposed != nil {
		for _, c := range r.Proposed.Capabilities {
			proposed[c.Name()] = c.Constraints
		}
	}
	approved := map[string]bool{}
	named := map[string]manifest.Capability{}
	approvedSkills := map[string]manifest.PublishedSkill{}
	if len(in.Manifest) > 0 {
		m, err := manifest.Parse(in.Manifest)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
		r.Approved = m
		for _, c := range m.Capabilities {
			approved[c.Name()] = true
			named[c.Name()] = c
		}
		for _, p := range m.PublishedSkills {
			approvedSkills[p.Ref()] = p
		}
	}
	// After drift, show the re-analysis: what approving would accept.
	view := rep
	if r.Reanalysis != nil {
		view = r.Reanalysis
	}
	if view != nil {
		r.Skill = view.Skill
		counts := map[string]int{}
		for _, c := range view.Capabilities {
			counts[c.ExtensionID]++
			cv := CapabilityView{Name: c.Name(), Title: c.Title, Description: c.Description, Proposed: c.Proposed, Approved: approved[c.Name()],
				Status: c.Status, Risk: c.Risk, Conflicts: c.Conflicts, Blockers: c.Blockers,
				ToolName: named[c.Name()].ToolName, ToolNameReason: named[c.Name()].ToolNameReason}
			if c.Risk != c.ServerRisk {
				sr := c.ServerRisk
				cv.ServerRisk = &sr
			}
			if a, ok := named[c.Name()]; ok {
				cv.Constraints, cv.CallApproval = a.Constraints, a.CallApproval
			} else {
				cv.Constraints = proposed[c.Name()]
			}
			r.Capabilities = append(r.Capabilities, cv)
			if u := c.Risk.Unknown(); len(u) > 0 && c.Proposed {
				r.Missing = append(r.Missing, MissingView{Capability: c.Name(), Fields: u})
			}
		}
		for _, sr := range view.Servers {
			g := sr.Grants
			if g == nil {
				g = []capability.Grant{}
			}
			r.Servers = append(r.Servers, ServerView{ServerID: sr.ServerID, Declaration: sr.Declaration, Grants: g, Server: sr.Server,
				Tools: counts[sr.ServerID], Error: sr.Error, SkillsExtension: sr.SkillsExtension, SkillsError: sr.SkillsError})
		}
		for _, p := range view.PublishedSkills {
			r.PublishedSkills = append(r.PublishedSkills, publishedView(p, approvedSkills, in.Blocked))
		}
		r.Proposal = ProposalView{Proposer: view.Proposal.Proposer, Capabilities: view.Proposal.Capabilities,
			Corrections: view.Proposal.Corrections, Error: view.Proposal.Error}
		r.Validation = view.Validation
		r.Overrides = view.Overrides
		if rep != nil {
			r.Settings = rep.Settings
		}
		r.Drift = append(r.Drift, view.Drift...)
		r.Layers, r.Scan, r.Suppressions = view.Layers, view.Scan, view.Suppressions
		if r.Provenance != nil && len(r.Provenance.Packages) > 0 && len(r.Layers) > 1 {
			// Layer 2's digest binds the packages the servers launch too.
			l := &r.Layers[1]
			l.Evidence = append(slices.Clone(l.Evidence), fmt.Sprintf("binds the skill's content %s and %s its servers launch, each checked against its registry's integrity hash",
				r.Provenance.Digest, plural.Of(len(r.Provenance.Packages), "package", "packages")))
		}

	}
	if rep != nil && r.Reanalysis != nil {
		r.Drift = append([]manifest.DriftRecord{}, rep.Drift...)
	}
	for c, why := range in.Blocked {
		r.Blocked = append(r.Blocked, BlockedCapability{Capability: c, Reason: why})
	}
	sort.Slice(r.Blocked, func(i, j int) bool { return r.Blocked[i].Capability < r.Blocked[j].Capability })
	prev, err := s.previous(ctx, in, rep)
	if err != nil {
		return nil, err
	}
	r.Previous = prev
	r.Next = next(in, r)
	r.Actions = Actions(in)
	return r, nil
}

// previous compares in with the newest other approved version of its key.
func (s *Service) previous(ctx context.Context, in store.Install, rep *manifest.Report) (*PreviousVersion, error) {
	if rep == nil {
		return nil, nil
	}
	rows, err := s.st.Installs(ctx, store.InstallFilter{Key: in.Key, States: store.ApprovedStates})
	if err != nil {
		return nil, err
	}
	for _, p := range rows {
		if p.Digest == in.Digest || len(p.Manifest) == 0 || len(p.Report) == 0 {
			continue
		}
		if _, err := manifest.Parse(p.Manifest); err != nil {
			return nil, fmt.Errorf("%w: %s version %s: %w", ErrStorage, p.Key, p.Digest, err)
		}
		prep, err := manifest.ParseReport(p.Report)
		if err != nil {
			return nil, fmt.Errorf("%w: %s version %s: %w", ErrStorage, p.Key, p.Digest, err)
		}
		pv := &PreviousVersion{Digest: p.Digest, State: p.State, Added: []string{}, Removed: []string{}, RiskChanges: []RiskChange{}, Pins: []ServerDrift{},
			ServersAdded: []string{}, ServersRemoved: []string{}, CredentialsAdded: []string{}, NewEgress: []string{}}
		// What the servers offer, version against version: the tools of
		// each report, with their effective risk. Approval may have left
		// some out; a tool offered by both is no change.
		before := map[string]capability.Risk{}
		for _, c := range prep.Capabilities {
			before[c.Name()] = c.Risk
		}
		now := map[string]bool{}
		for _, c := range rep.Capabilities {
			now[c.Name()] = true
			b, ok := before[c.Name()]
			if c.Risk.DataEgress.Value == capability.EgressNetwork && (!ok || b.DataEgress.Value != capability.EgressNetwork) {
				pv.NewEgress = append(pv.NewEgress, c.Name())
			}
			if !ok {
				pv.Added = append(pv.Added, c.Name())
				continue
			}
			for _, f := range [][3]string{
				{"riskLevel", string(b.RiskLevel.Value), string(c.Risk.RiskLevel.Value)},
				{"sideEffects", string(b.SideEffects.Value), string(c.Risk.SideEffects.Value)},
				{"dataEgress", string(b.DataEgress.Value), string(c.Risk.DataEgress.Value)},
			} {
				if f[1] != f[2] {
					pv.RiskChanges = append(pv.RiskChanges, RiskChange{Capability: c.Name(), Field: f[0], Before: f[1], After: f[2]})
				}
			}
		}
		for n := range before {
			if !now[n] {
				pv.Removed = append(pv.Removed, n)
			}
		}
		sort.Strings(pv.Removed)
		ids := make([]string, 0, len(prep.Pins))
		for id := range prep.Pins {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			old := prep.Pins[id]
			for _, sr := range rep.Servers {
				if sr.ServerID == id && sr.Pins != nil {
					if d := capability.Diff(old, sr.Pins.Select(old.Names()...)); !d.Empty() {
						pv.Pins = append(pv.Pins, ServerDrift{ServerID: id, Drift: d})
					}
				}
			}
		}
		pv.ServersAdded, pv.ServersRemoved = setDiff(serverIDs(rep), serverIDs(prep))
		pv.CredentialsAdded, _ = setDiff(credentialNames(rep), credentialNames(prep))
		if a, b := signerOf(p), signerOf(in); a != b {
			pv.Signature = &Change{Before: a, After: b}
		}
		pv.PublishedSkills = publishedChanges(prep.PublishedSkills, rep.PublishedSkills)
		oldPkgs, err := packagesOf(p)
		if err != nil {
			return nil, err
		}
		newPkgs, err := packagesOf(in)
		if err != nil {
			return nil, err
		}
		pv.Packages = diffPackages(oldPkgs, newPkgs)
		pv.FilesOnly = len(pv.Added)+len(pv.Removed)+len(pv.RiskChanges)+len(pv.Pins)+len(pv.ServersAdded)+
			len(pv.ServersRemoved)+len(pv.CredentialsAdded)+len(pv.NewEgress)+len(pv.PublishedSkills)+len(pv.Packages) == 0 && pv.Signature == nil
		if err := pv.seal(); err != nil {
			return nil, err
		}
		return pv, nil
	}
	return nil, nil
}

// seal sets pv.DiffDigest: SHA-256 of pv's RFC 8785 form without it.
func (pv *PreviousVersion) seal() error {
	pv.DiffDigest = ""
	raw, err := json.Marshal(pv)
	if err != nil {
		return err
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(canon)
	pv.DiffDigest = "sha256:" + hex.EncodeToString(sum[:])
	return nil
}

// serverIDs are the servers a report's version declares.
func serverIDs(rep *manifest.Report) []string {
	out := make([]string, 0, len(rep.Servers))
	for _, s := range rep.Servers {
		out = append(out, s.ServerID)
	}
	return out
}

// credentialNames are the credentials a report's servers reference.
func credentialNames(rep *manifest.Report) []string {
	var out []string
	for _, s := range rep.Servers {
		out = append(out, s.Declaration.Credentials...)
	}
	return out
}

// setDiff returns what is in a and not in b, and what is in b and not in
// a, each sorted and without repeats.
func setDiff(a, b []string) (onlyA, onlyB []string) {
	in := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	onlyA, onlyB = []string{}, []string{}
	for x := range ma {
		if !mb[x] {
			onlyA = append(onlyA, x)
		}
	}
	for x := range mb {
		if !ma[x] {
			onlyB = append(onlyB, x)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB
}

// signerOf is who signed in with a trusted key, per its provenance, or "".
func signerOf(in store.Install) string {
	var p Provenance
	if len(in.Provenance) == 0 || json.Unmarshal(in.Provenance, &p) != nil || p.version() != in.Digest || p.Signature == nil || p.Signature.Status != "verified" {
		return ""
	}
	return p.Signature.Signer
}

// next says what an operator can do next with in.
func next(in store.Install, r *Review) []string {
	k := in.Key
	switch in.State {
	case store.StatePendingInstall, store.StateAnalyzing:
		return []string{fmt.Sprintf("the analysis did not finish; run skillgate recheck %s to analyse it again", k)}
	case store.StateBlocked:
		out := []string{}
		if r != nil {
			out = append(out, r.Validation.Reasons...)
		} else {
			out = append(out, fmt.Sprintf("run skillgate review %s to see what blocks it", k))
		}
		if r != nil && r.ContentBlocked() {
			return append(out, fmt.Sprintf("or skillgate reject %s --why \"…\"", k))
		}
		return append(out, fmt.Sprintf("approve the ready capabilities only with skillgate approve %s --only CAP,…, or skillgate reject %s --why \"…\"", k, k))
	case store.StateAwaitingApproval:
		return []string{fmt.Sprintf("skillgate approve %s (or --only CAP,…), or skillgate reject %s --why \"…\"", k, k)}
	case store.StateInstalled, store.StateEnabled, store.StateDisabled:
		out := []string{}
		if len(in.Blocked) > 0 {
			what := blockedWhat(in.Blocked)
			if len(in.Pending) > 0 {
				out = append(out, fmt.Sprintf("%s blocked by drift; review the changes, then skillgate approve %s to accept them", what, k))
			} else {
				out = append(out, fmt.Sprintf("%s blocked by drift; run skillgate recheck %s to fetch the changed definitions, then skillgate approve %s", what, k, k))
			}
		}
		switch in.State {
		case store.StateInstalled, store.StateDisabled:
			out = append(out, fmt.Sprintf("skillgate enable %s", k))
		case store.StateEnabled:
			out = append(out, fmt.Sprintf("skillgate disable %s", k))
		}
		return out
	default:
		return []string{"install it again with skillgate install PATH"}
	}
}

// ContentBlocked reports whether the content scan (layer 4) blocks the
// install: then no capability can be approved, with --only or without.
func (r *Review) ContentBlocked() bool {
	for _, l := range r.Layers {
		if l.Layer == 4 && l.Verdict == manifest.LayerBlock {
			return true
		}
	}
	return false
}

// publishedView renders one published skill of a report for a review.
func publishedView(p manifest.PublishedSkill, approved map[string]manifest.PublishedSkill, blocked map[string]string) PublishedSkillView {
	v := PublishedSkillView{Ref: p.Ref(), ServerID: p.ServerID, URI: p.URI, Name: p.Name, Description: p.Description, Status: p.Status,
		Problems: p.Problems, Files: len(p.Resources), SetDigest: p.SetDigest, AllowedTools: p.AllowedTools}
	if a, ok := approved[p.Ref()]; ok && a.SetDigest == p.SetDigest && a.Dynamic == p.Dynamic {
		v.Approved, v.Path, v.DynamicAllowed, v.ToolsApproved = true, a.Path, a.DynamicAllowed, a.ToolsApproved
	}
	if why, ok := blocked[p.Ref()]; ok {
		v.Notes = append(v.Notes, "blocked since approval: "+why)
	}
	switch {
	case p.Status == manifest.SkillDynamic && !v.DynamicAllowed:
		v.Notes = append(v.Notes, fmt.Sprintf(`its resources are "dynamic": no digests, so nothing can be verified or bound; refused unless you approve with --allow-dynamic %s`, v.Ref))
	case p.Status == manifest.SkillDynamic:
		v.Notes = append(v.Notes, `dynamic, allowed by the operator: served without integrity checks`)
	}
	if len(p.AllowedTools) > 0 {
		if v.ToolsApproved {
			v.Notes = append(v.Notes, "allowed-tools approved by the operator: "+strings.Join(p.AllowedTools, " "))
		} else {
			v.Notes = append(v.Notes, fmt.Sprintf("its frontmatter asks for allowed-tools %s: ignored (an MCP-served skill grants no tools) unless you approve with --allow-tools %s", strings.Join(p.AllowedTools, " "), v.Ref))
		}
	}
	return v
}

// blockedWhat says how many approved capabilities and published skills
// blocked holds ("2 approved capabilities are", "1 approved published
// skill is").
func blockedWhat(blocked map[string]string) string {
	skills := 0
	for k := range blocked {
		if strings.Contains(k, "://") { // serverId/uri; a tool name holds no ':'
			skills++
		}
	}
	caps := len(blocked) - skills
	var parts []string
	if caps > 0 || skills == 0 {
		parts = append(parts, fmt.Sprintf("%d approved %s", caps, plural.Noun(caps, "capability", "capabilities")))
	}
	if skills > 0 {
		parts = append(parts, fmt.Sprintf("%d approved published %s", skills, plural.Noun(skills, "skill", "skills")))
	}
	return strings.Join(parts, " and ") + plural.Noun(len(blocked), " is", " are")
}

// publishedChanges lists the published skills added, removed or changed
// between two analyses, sorted.
func publishedChanges(before, after []manifest.PublishedSkill) []string {
	old := map[string]manifest.PublishedSkill{}
	for _, p := range before {
		old[p.Ref()] = p
	}
	var out []string
	for _, p := range after {
		o, ok := old[p.Ref()]
		delete(old, p.Ref())
		switch {
		case !ok:
			out = append(out, p.Ref()+": added")
		case o.SetDigest != p.SetDigest || o.Dynamic != p.Dynamic:
			out = append(out, p.Ref()+": its files changed")
		case !jsonEqualRaw(o.Frontmatter, p.Frontmatter):
			out = append(out, p.Ref()+": its frontmatter changed")
		}
	}
	for ref := range old {
		out = append(out, ref+": removed")
	}
	sort.Strings(out)
	return out
}
