// Package change is the changes queue: proposed modifications of the
// registry that wait for a human and are never applied automatically
// (seed 000's changes page). Two kinds:
//
//   - promote_provider: the same action offered by several providers'
//     tools, merged into one executor with one backend per provider. The
//     install flow queues one when it finds it (package promote); applying
//     it checks the proposal again against the approved installs, runs a
//     smoke check that the executor lists and resolves, and registers the
//     executor and its backends in one transaction with its audit record.
//   - update: a new version of an approved skill awaiting re-consent. It
//     is the install awaiting approval itself: approving or rejecting it
//     here is approving or rejecting that install.
//
// The CLI (`skillgate changes`), the REST API and the admin console's
// changes page all go through [Service].
package change

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Errors callers branch on (wrapped).
var (
	// ErrNotFound: no change has the ID.
	ErrNotFound = errors.New("no such change")
	// ErrDecided: the change was already applied or rejected.
	ErrDecided = errors.New("change already decided")
	// ErrInvalid: the decision lacks what it needs (a reason).
	ErrInvalid = errors.New("invalid decision")
	// ErrRefused: the change cannot be applied as the registry stands;
	// the message says what to do first.
	ErrRefused = errors.New("change cannot be applied")
)

// HTTPStatus is the HTTP status of an error of the queue, or of the
// install flow for an update, for the REST API and the admin console: 404
// no such change, 400 a decision without its reason, 409 decided already
// or not applicable as the registry stands. ok is false for an internal
// error.
func HTTPStatus(err error) (status int, ok bool) {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, true
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest, true
	case errors.Is(err, ErrDecided), errors.Is(err, ErrRefused):
		return http.StatusConflict, true
	}
	return install.HTTPStatus(err)
}

// KindUpdate is the kind of a change that is a new version awaiting
// re-consent.
const KindUpdate = "update"

// Smoke checks that a registration lists and resolves as the gateway
// would serve it (broker.SmokeRegistration), returning what it found in
// one line.
type Smoke func(ctx context.Context, reg store.Registration) (string, error)

// Options configures a Service; every field is required.
type Options struct {
	Store    store.ChangeStore
	Installs *install.Service
	Smoke    Smoke
}

// Service is the changes queue.
type Service struct {
	st       store.ChangeStore
	installs *install.Service
	smoke    Smoke
}

// New returns a Service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil || opts.Installs == nil || opts.Smoke == nil {
		return nil, errors.New("change: Options.Store, Installs and Smoke are required")
	}
	return &Service{st: opts.Store, installs: opts.Installs, smoke: opts.Smoke}, nil
}

// Item is one change as the queue shows it.
type Item struct {
	// ID is the change's number, or for an update "update:KEY@DIGEST12".
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	State   string    `json:"state"`
	Subject string    `json:"subject"`
	Summary string    `json:"summary"`
	Created time.Time `json:"created"`
	// QueuedBy and Why say who queued it and on what evidence.
	QueuedBy  string    `json:"queuedBy,omitempty"`
	Why       string    `json:"why,omitempty"`
	Decided   time.Time `json:"decided,omitzero"`
	DecidedBy string    `json:"decidedBy,omitempty"`
	Decision  string    `json:"decision,omitempty"`
	// Proposal is a promote_provider change's proposal.
	Proposal *promote.Proposal `json:"proposal,omitempty"`
	// Update is an update's version: its key, digest and the approved
	// version it would replace.
	Update *Update `json:"update,omitempty"`
}

// Update is a new version awaiting re-consent.
type Update struct {
	Key      string `json:"key"`
	Digest   string `json:"digest"`
	Previous string `json:"previous"`
	// Ref names the version for the install commands (KEY@DIGEST12).
	Ref string `json:"ref"`
}

// Pending reports whether the item still waits for a human.
func (it Item) Pending() bool { return it.State == string(store.ChangePending) }

// List returns the changes, pending first (updates, then the queue newest
// first), then decided ones newest first; all when all, else pending only.
func (s *Service) List(ctx context.Context, all bool) ([]Item, error) {
	ups, err := s.updates(ctx)
	if err != nil {
		return nil, err
	}
	f := store.ChangeFilter{}
	if !all {
		f.States = []store.ChangeState{store.ChangePending}
	}
	cs, err := s.st.Changes(ctx, f)
	if err != nil {
		return nil, err
	}
	out := ups
	var decided []Item
	for _, c := range cs {
		it, err := item(c)
		if err != nil {
			return nil, err
		}
		if it.Pending() {
			out = append(out, it)
		} else {
			decided = append(decided, it)
		}
	}
	return append(out, decided...), nil
}

// updates lists the new versions of approved skills awaiting approval:
// a version blocked or awaiting approval that was installed after the
// newest approved version of its skill. An older version (a blocked v1
// left behind when v2 was approved) never proposes to replace a newer
// one. Versions are ordered by when they were installed (a version
// installed again after removal counts from then), as the install list
// gives them, newest first.
func (s *Service) updates(ctx context.Context) ([]Item, error) {
	all, err := s.installs.List(ctx)
	if err != nil {
		return nil, err
	}
	approved := map[string]string{}
	for _, in := range all {
		if _, ok := approved[in.Key]; !ok && in.State.Approved() {
			approved[in.Key] = in.Digest
		}
	}
	older := map[string]bool{} // keys whose newest approved version is passed
	var out []Item
	for _, in := range all {
		prev, ok := approved[in.Key]
		if in.Digest == prev {
			older[in.Key] = true
		}
		if !ok || older[in.Key] || (in.State != store.StateAwaitingApproval && in.State != store.StateBlocked) {
			continue
		}
		ref := install.VersionRef(in.Key, in.Digest)
		out = append(out, Item{ID: KindUpdate + ":" + ref, Kind: KindUpdate, State: string(store.ChangePending), Subject: in.Key,
			Summary: fmt.Sprintf("%s: new version %s awaiting re-consent (%s); replaces %s", in.Key, install.ShortDigest(in.Digest), in.State, install.ShortDigest(prev)),
			Created: in.UpdatedAt, Why: in.Reason, Update: &Update{Key: in.Key, Digest: in.Digest, Previous: prev, Ref: ref}})
	}
	return out, nil
}

func item(c store.Change) (Item, error) {
	it := Item{ID: strconv.FormatInt(c.ID, 10), Kind: string(c.Kind), State: string(c.State), Subject: c.Subject, Summary: c.Summary,
		Created: c.Created, QueuedBy: c.QueuedBy, Why: c.Why, Decided: c.Decided, DecidedBy: c.DecidedBy, Decision: c.Decision}
	if c.Kind == store.ChangePromoteProvider {
		var p promote.Proposal
		if err := json.Unmarshal(c.Proposal, &p); err != nil {
			return it, fmt.Errorf("change %d: proposal: %w", c.ID, err)
		}
		it.Proposal = &p
	}
	return it, nil
}

// Get returns one change by ID.
func (s *Service) Get(ctx context.Context, id string) (Item, error) {
	if strings.HasPrefix(id, KindUpdate+":") {
		ups, err := s.updates(ctx)
		if err != nil {
			return Item{}, err
		}
		for _, u := range ups {
			if u.ID == id {
				return u, nil
			}
		}
		return Item{}, fmt.Errorf("%w: %s (a new version awaiting approval; list them with skillgate changes ls)", ErrNotFound, id)
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return Item{}, fmt.Errorf("%w: %q: a change ID is a number, or update:KEY@DIGEST for an update", ErrNotFound, id)
	}
	cs, err := s.st.Changes(ctx, store.ChangeFilter{ID: n})
	if err != nil {
		return Item{}, err
	}
	if len(cs) == 0 {
		return Item{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return item(cs[0])
}

// Approve applies a change. For an update it approves the new version
// (every capability ready; as `skillgate approve`). For promote_provider
// it checks the proposal again against the approved installs and the
// shipped (first_party) provider skills (every backend's skill approved
// and enabled, its tool approved and not blocked, every mapping compiling
// against the approved tool), re-runs the admission layers on the
// executor and backends it would register (see admit: the format, the
// content scan of the executor's description, and a smoke start of each
// provider's servers in the sandbox checking every mapped tool against
// its approved definition), runs the smoke check, and registers the executor and backends with the audit
// record in one transaction. Nothing is registered when any step fails.
func (s *Service) Approve(ctx context.Context, id, reason, actor string) (Item, error) {
	return s.ApproveWith(ctx, id, reason, actor, ApplyOptions{})
}

// ApplyOptions are what an operator may add to an apply.
type ApplyOptions struct {
	// SmokeCall, when set, is called through each backend of a
	// promote_provider change before it is registered (see [SmokeCall]).
	SmokeCall *SmokeCall
}

// ApproveWith is [Service.Approve] with the operator's options: a smoke
// call through every backend of a promote_provider change. ErrInvalid
// when a smoke call is given for an update, or does not fit the change.
func (s *Service) ApproveWith(ctx context.Context, id, reason, actor string, o ApplyOptions) (Item, error) {
	it, err := s.Get(ctx, id)
	if err != nil {
		return Item{}, err
	}
	if !it.Pending() {
		return it, fmt.Errorf("%w: change %s was %s by %s", ErrDecided, it.ID, it.State, it.DecidedBy)
	}
	if it.Update != nil {
		if o.SmokeCall != nil {
			return it, fmt.Errorf("%w: a smoke call tests a promote_provider change's backends; %s is an update", ErrInvalid, it.ID)
		}
		if _, err := s.installs.Approve(ctx, it.Update.Ref, nil, actor); err != nil {
			return it, err
		}
		it.State, it.DecidedBy, it.Decision = string(store.ChangeApplied), actor, reason
		return it, nil
	}
	if len(strings.TrimSpace(reason)) < install.MinWhyLength {
		return it, fmt.Errorf("%w: say why you apply change %s in at least %d characters", ErrInvalid, it.ID, install.MinWhyLength)
	}
	regs, err := s.st.Registrations(ctx)
	if err != nil {
		return it, err
	}
	in, err := s.installs.PromotionInputs(ctx, "", regs)
	if err != nil {
		return it, err
	}
	for _, b := range it.Proposal.Backends {
		switch st, ok := in.States[b.Skill]; {
		case !ok:
			return it, fmt.Errorf("%w: %s is not approved; review and approve it first (skillgate review %s)", ErrRefused, b.Skill, b.Skill)
		case st != store.StateEnabled:
			return it, fmt.Errorf("%w: %s is %s; enable it first (skillgate enable %s)", ErrRefused, b.Skill, st, b.Skill)
		}
	}
	v, err := promote.Validate(in.Catalog, *it.Proposal, in.Skills, in.Serving)
	if err != nil {
		return it, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if len(v.Removed) > len(it.Proposal.Removed) {
		return it, fmt.Errorf("%w: the registry changed since the change was queued: %s", ErrRefused, strings.Join(v.Removed[len(it.Proposal.Removed):], "; "))
	}
	admission, err := s.admit(ctx, v, in, o.SmokeCall)
	if err != nil {
		return it, err
	}
	r := store.Registration{Executor: v.Executor.Name}
	if v.New {
		if r.Definition, err = json.Marshal(v.Executor); err != nil {
			return it, err
		}
	}
	for _, b := range v.Backends {
		r.Backends = append(r.Backends, store.RegisteredBackend{Provider: b.Provider, Skill: b.Skill, Server: b.Server, Tool: b.Tool, Arguments: b.Arguments})
	}
	smoke, err := s.smoke(ctx, r)
	if err != nil {
		return it, fmt.Errorf("%w: smoke check: %w", ErrRefused, err)
	}
	n, _ := strconv.ParseInt(it.ID, 10, 64)
	data, _ := json.Marshal(map[string]any{"kind": it.Kind, "executor": r.Executor, "new": v.New, "backends": r.Backends, "smoke": smoke, "admission": admission})
	c, err := s.st.DecideChange(ctx, store.ChangeDecision{ID: n, To: store.ChangeApplied, By: actor, Reason: reason, Register: &r},
		store.AuditRecord{Actor: actor, Action: "change.apply", Subject: "change " + it.ID, Reasons: []string{reason, smoke}, Data: data}, audit.SealStored)
	if err != nil {
		return it, decideErr(err)
	}
	return item(c)
}

// Reject rejects a change with a reason. The record stays (a rejected
// promote_provider proposal is not queued again). For an update it
// rejects the new version (as `skillgate reject`).
func (s *Service) Reject(ctx context.Context, id, reason, actor string) (Item, error) {
	it, err := s.Get(ctx, id)
	if err != nil {
		return Item{}, err
	}
	if !it.Pending() {
		return it, fmt.Errorf("%w: change %s was %s by %s", ErrDecided, it.ID, it.State, it.DecidedBy)
	}
	if len(strings.TrimSpace(reason)) < install.MinWhyLength {
		return it, fmt.Errorf("%w: say why you reject change %s in at least %d characters", ErrInvalid, it.ID, install.MinWhyLength)
	}
	if it.Update != nil {
		if _, err := s.installs.Reject(ctx, it.Update.Ref, reason, actor); err != nil {
			return it, err
		}
		it.State, it.DecidedBy, it.Decision = string(store.ChangeRejected), actor, reason
		return it, nil
	}
	n, _ := strconv.ParseInt(it.ID, 10, 64)
	data, _ := json.Marshal(map[string]any{"kind": it.Kind, "executor": it.Subject})
	c, err := s.st.DecideChange(ctx, store.ChangeDecision{ID: n, To: store.ChangeRejected, By: actor, Reason: reason},
		store.AuditRecord{Actor: actor, Action: "change.reject", Subject: "change " + it.ID, Reasons: []string{reason}, Data: data}, audit.SealStored)
	if err != nil {
		return it, decideErr(err)
	}
	return item(c)
}

func decideErr(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%w: %w", ErrDecided, err)
	}
	return err
}

// WriteList writes changes as the table of 'skillgate changes ls', or a
// sentence when there are none.
func WriteList(w io.Writer, items []Item) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(w, "No changes wait for a human.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tSUMMARY")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.ID, it.Kind, it.State, it.Summary)
	}
	return tw.Flush()
}

// WriteText writes the change for a human, as 'skillgate changes show'
// prints it: its state, who queued and decided it, a promote_provider
// proposal with its backends and evidence, or the update it stands for.
func (it Item) WriteText(w io.Writer) {
	fmt.Fprintf(w, "change %s  %s  %s\n%s\n", it.ID, it.Kind, it.State, it.Summary)
	if it.Why != "" {
		fmt.Fprintf(w, "queued: %s by %s (%s)\n", it.Created.UTC().Format("2006-01-02 15:04:05Z"), orDash(it.QueuedBy), it.Why)
	}
	if it.DecidedBy != "" {
		fmt.Fprintf(w, "decided: %s by %s: %s\n", it.Decided.UTC().Format("2006-01-02 15:04:05Z"), it.DecidedBy, it.Decision)
	}
	if p := it.Proposal; p != nil {
		kind := "catalog executor"
		if p.New {
			kind = "new executor"
		}
		fmt.Fprintf(w, "\n%s %s: %s\n  inputSchema: %s\n", kind, p.Executor.Name, p.Executor.Description, p.Executor.InputSchema)
		if len(p.Serving) > 0 {
			fmt.Fprintf(w, "  already served by: %s\n", strings.Join(p.Serving, ", "))
		}
		fmt.Fprintln(w, "\nbackends (drafted by "+p.Drafter+"):")
		for _, b := range p.Backends {
			fmt.Fprintf(w, "  %s  %s: %s/%s\n", b.Provider, b.Skill, b.Server, b.Tool)
			for _, k := range slices.Sorted(maps.Keys(b.Arguments)) {
				fmt.Fprintf(w, "    %s: %s\n", k, b.Arguments[k])
			}
		}
		fmt.Fprintln(w, "\nevidence:")
		for _, e := range p.Evidence {
			fmt.Fprintf(w, "  %s\n", e)
		}
		for _, r := range p.Removed {
			fmt.Fprintf(w, "removed by validation: %s\n", r)
		}
	}
	if u := it.Update; u != nil {
		fmt.Fprintf(w, "\nversion %s replaces %s; see skillgate review %s\n", u.Digest, u.Previous, u.Ref)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
