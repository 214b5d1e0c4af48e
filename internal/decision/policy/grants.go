package policy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// MaxGrants bounds the grants the engine keeps in memory.
const MaxGrants = 10_000

// Grant is a human's approval for risky calls: a principal pattern may
// invoke a capability pattern, optionally only with certain argument
// values, up to a risk level, until it expires or its uses run out.
type Grant struct {
	ID string `json:"id"`
	// Principal is "tenant/agent"; '*' matches any run of characters
	// ("acme/*").
	Principal string `json:"principal"`
	// Capability is "skill:extensionId/capabilityId" (the skill, then the
	// server id in its mcp.json, then the tool); '*' as in Principal
	// ("acme/notes:fs/*", "acme/notes:*"), and "*" alone is every
	// capability of every skill. It always names the skill: two skills may
	// both call a server "fs".
	Capability string `json:"capability"`
	// Args binds the grant to argument values, as constraint argValues:
	// each named argument must be present and match one of its values.
	Args map[string][]string `json:"args,omitempty"`
	// Level is the highest risk level the grant covers: a destructive call
	// needs a destructive grant.
	Level capability.RiskLevel `json:"level"`
	// ExpiresAt ends the grant; nil never.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Uses is how many calls the grant allows; 0 is unlimited. Used counts
	// the calls it allowed.
	Uses      int        `json:"uses"`
	Used      int        `json:"used"`
	Reason    string     `json:"reason,omitempty"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Status is "active", "expired", "used_up" or "revoked" at time now.
func (g Grant) Status(now time.Time) string {
	switch {
	case g.RevokedAt != nil:
		return "revoked"
	case g.ExpiresAt != nil && !now.Before(*g.ExpiresAt):
		return "expired"
	case g.Uses > 0 && g.Used >= g.Uses:
		return "used_up"
	}
	return "active"
}

func (g *Grant) usesText() string {
	if g.Uses == 0 {
		return "use " + strconv.Itoa(g.Used) + " of unlimited"
	}
	return "use " + strconv.Itoa(g.Used) + " of " + strconv.Itoa(g.Uses)
}

// grantEntry is a grant in memory, with its compiled argument pattern and
// live use count.
type grantEntry struct {
	g    Grant
	args *constraint.Compiled
	used atomic.Int64
	dead atomic.Bool // revoked or found unusable by the store
}

// NewGrant validates a grant a human asked for and fills in its id,
// creation time and zero use count. Principal and Capability are required;
// Level defaults to the lowest level that covers nothing destructive
// ("write").
func NewGrant(g Grant, now time.Time) (Grant, error) {
	g.Principal = strings.TrimPrefix(g.Principal, "Agent::")
	if u, err := strconv.Unquote(g.Principal); err == nil {
		g.Principal = u
	}
	if err := capability.ValidatePattern(g.Principal); err != nil {
		return Grant{}, fmt.Errorf("%w: principal: %w", ErrInvalidGrant, err)
	}
	switch {
	case len(g.Capability) > 520:
		return Grant{}, fmt.Errorf("%w: capability is longer than 520 characters", ErrInvalidGrant)
	case g.Uses < 0:
		return Grant{}, fmt.Errorf("%w: uses %d: give a positive count, or 0 for unlimited", ErrInvalidGrant, g.Uses)
	case g.ExpiresAt != nil && !g.ExpiresAt.After(now):
		return Grant{}, fmt.Errorf("%w: expires %s is not in the future", ErrInvalidGrant, g.ExpiresAt.Format(time.RFC3339))
	case len(g.Reason) > 1000:
		return Grant{}, fmt.Errorf("%w: reason is longer than 1000 characters", ErrInvalidGrant)
	}
	if err := checkGrantCapability(g.Capability); err != nil {
		return Grant{}, err
	}
	if g.Level == "" {
		g.Level = capability.RiskWrite
	}
	if !g.Level.Valid() {
		return Grant{}, fmt.Errorf("%w: level %q: use read, write or destructive", ErrInvalidGrant, g.Level)
	}
	if _, err := (constraint.Set{ArgValues: g.Args}).Compile(); err != nil && g.Args != nil {
		return Grant{}, fmt.Errorf("%w: args: %w", ErrInvalidGrant, err)
	}
	g.ID = "g_" + strings.ToLower(rand.Text()[:12])
	g.Used = 0
	g.CreatedAt = now.UTC()
	g.RevokedAt = nil
	if g.ExpiresAt != nil {
		t := g.ExpiresAt.UTC()
		g.ExpiresAt = &t
	}
	return g, nil
}

func newGrantEntry(g Grant) (*grantEntry, error) {
	ge := &grantEntry{g: g}
	if g.Args != nil {
		c, err := (constraint.Set{ArgValues: g.Args}).Compile()
		if err != nil {
			return nil, fmt.Errorf("%w: grant %s: args: %w", ErrInvalidGrant, g.ID, err)
		}
		ge.args = c
	}
	ge.used.Store(int64(g.Used))
	ge.dead.Store(g.RevokedAt != nil)
	return ge, nil
}

// matches reports whether the grant covers this call now, ignoring uses.
func (ge *grantEntry) matches(p capability.Principal, ce *capEntry, args map[string]any, now time.Time) bool {
	g := &ge.g
	if ge.dead.Load() || g.ExpiresAt != nil && !now.Before(*g.ExpiresAt) {
		return false
	}
	if g.Level.Compare(ce.RiskLevel) < 0 {
		return false
	}
	if !constraint.MatchWildcard(g.Principal, p.ID()) || !constraint.MatchWildcard(g.Capability, ce.ref) {
		return false
	}
	return ge.args == nil || ge.args.Check(args) == nil
}

// useGrant finds a grant covering the call and consumes one use (unless
// dry). It returns nil when none covers it.
func (e *Engine) useGrant(ctx context.Context, p capability.Principal, ce *capEntry, args map[string]any, dry bool) (*Grant, error) {
	now := e.now()
	for _, ge := range *e.grants.Load() {
		if !ge.matches(p, ce, args, now) {
			continue
		}
		if ge.g.Uses > 0 && ge.used.Load() >= int64(ge.g.Uses) {
			continue
		}
		g := ge.g
		if dry {
			g.Used = int(ge.used.Load())
			return &g, nil
		}
		if e.opts.Store != nil {
			row, err := e.opts.Store.UseGrant(ctx, g.ID, now)
			if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
				ge.dead.Store(true)
				continue
			}
			if err != nil {
				return nil, err
			}
			stored, err := grantOf(row)
			if err != nil {
				return nil, err
			}
			ge.used.Store(int64(stored.Used))
			e.log.InfoContext(ctx, "grant used", "grant", g.ID, "principal", p.ID(), "capability", ce.ref, "used", stored.Used)
			return &stored, nil
		}
		for {
			u := ge.used.Load()
			if ge.g.Uses > 0 && u >= int64(ge.g.Uses) {
				break
			}
			if ge.used.CompareAndSwap(u, u+1) {
				g.Used = int(u + 1)
				return &g, nil
			}
		}
	}
	return nil, nil
}

// AddGrant validates a grant ([NewGrant]), checks that its capability
// pattern matches a capability of an installed skill (the records loaded
// with [Engine.LoadCapabilities]; else [ErrInvalidGrant] wrapping
// [ErrNoSuchCapability], naming the closest ones), stores it and makes it
// usable at once. The CLI, the REST API and the console all add grants
// here.
func (e *Engine) AddGrant(ctx context.Context, g Grant) (Grant, error) {
	g, err := NewGrant(g, e.now())
	if err != nil {
		return Grant{}, err
	}
	if err := e.snap.Load().checkOffered(g.Capability); err != nil {
		return Grant{}, err
	}
	ge, err := newGrantEntry(g)
	if err != nil {
		return Grant{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := *e.grants.Load()
	if len(cur) >= MaxGrants {
		return Grant{}, fmt.Errorf("%w: there are already %d grants; revoke unused ones first", ErrInvalidGrant, MaxGrants)
	}
	if e.opts.Store != nil {
		row, rec, err := addRecord(g)
		if err == nil {
			err = e.opts.Store.CreateGrant(ctx, row, rec, audit.SealStored)
		}
		if err != nil {
			return Grant{}, fmt.Errorf("store grant: %w", err)
		}
	}
	next := append(slices.Clone(cur), ge)
	e.grants.Store(&next)
	e.log.InfoContext(ctx, "grant added", "grant", g.ID, "principal", g.Principal, "capability", g.Capability, "level", g.Level, "uses", g.Uses, "by", g.CreatedBy)
	return g, nil
}

// RevokeGrant revokes a grant on behalf of the operator by: it stops
// matching at once.
func (e *Engine) RevokeGrant(ctx context.Context, id, by string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := *e.grants.Load()
	i := slices.IndexFunc(cur, func(ge *grantEntry) bool { return ge.g.ID == id })
	if e.opts.Store != nil {
		err := e.opts.Store.RevokeGrant(ctx, id, e.now(), revokeRecord(by), audit.SealStored)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: %q; list them with 'skillgate grant ls'", ErrGrantNotFound, id)
		}
		if err != nil {
			return err
		}
	} else if i < 0 {
		return fmt.Errorf("%w: %q; list them with 'skillgate grant ls'", ErrGrantNotFound, id)
	}
	if i >= 0 {
		cur[i].dead.Store(true)
		next := slices.Delete(slices.Clone(cur), i, i+1)
		e.grants.Store(&next)
	}
	e.log.InfoContext(ctx, "grant revoked", "grant", id, "by", by)
	return nil
}

// ReleaseGrant gives back the use of grant id that a decision consumed
// ([Engine.Evaluate] names it in a [ReasonGrant] reason) when the call was
// then not relayed to its server: a one-use grant stays usable for the
// call that will reach it. Releasing more uses than were consumed is not
// possible; an unknown id is not an error (the grant may have been
// revoked meanwhile, and a revoked grant is never used again).
func (e *Engine) ReleaseGrant(ctx context.Context, id string) error {
	var ge *grantEntry
	for _, g := range *e.grants.Load() {
		if g.g.ID == id {
			ge = g
			break
		}
	}
	if e.opts.Store != nil {
		if err := e.opts.Store.ReleaseGrant(ctx, id); err != nil {
			return fmt.Errorf("release grant %s: %w", id, err)
		}
	}
	if ge == nil {
		return nil
	}
	for {
		u := ge.used.Load()
		if u <= 0 || ge.used.CompareAndSwap(u, u-1) {
			break
		}
	}
	e.log.InfoContext(ctx, "grant use released: the call was not relayed", "grant", id)
	return nil
}

// Grants returns the grants in memory (every unrevoked one, expired and
// used-up ones included) with their current use counts.
func (e *Engine) Grants() []Grant {
	cur := *e.grants.Load()
	out := make([]Grant, 0, len(cur))
	for _, ge := range cur {
		g := ge.g
		g.Used = int(ge.used.Load())
		out = append(out, g)
	}
	return out
}

// ReloadGrants reads the stored grants again, with their use counts: a
// grant another process added, revoked or rescoped applies at once. The
// use counts it loads only hint; every use is still taken from the store.
// On error nothing changes.
func (e *Engine) ReloadGrants(ctx context.Context) error { return e.reloadGrants(ctx) }

func (e *Engine) reloadGrants(ctx context.Context) error {
	if e.opts.Store == nil {
		return nil
	}
	gs, err := e.storedGrants(ctx)
	if err != nil {
		return fmt.Errorf("load grants: %w", err)
	}
	if len(gs) > MaxGrants {
		gs = gs[len(gs)-MaxGrants:]
	}
	entries := make([]*grantEntry, 0, len(gs))
	for _, g := range gs {
		ge, err := newGrantEntry(g)
		if err != nil {
			return err
		}
		entries = append(entries, ge)
	}
	e.mu.Lock()
	e.grants.Store(&entries)
	e.mu.Unlock()
	return nil
}

// WriteGrants writes grants as the table of 'skillgate grant ls': uses as
// USED/ALLOWED (∞ when unlimited), the expiry, and the status at now.
func WriteGrants(w io.Writer, gs []Grant, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPRINCIPAL\tCAPABILITY\tLEVEL\tUSED\tEXPIRES\tSTATUS")
	for _, g := range gs {
		uses, exp := fmt.Sprintf("%d/%d", g.Used, g.Uses), "never"
		if g.Uses == 0 {
			uses = fmt.Sprintf("%d/∞", g.Used)
		}
		if g.ExpiresAt != nil {
			exp = g.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.Principal, g.Capability, g.Level, uses, exp, g.Status(now))
	}
	return tw.Flush()
}
