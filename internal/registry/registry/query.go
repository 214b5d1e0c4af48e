package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Query filters the registry. The zero Query selects every enabled, valid
// skill that wins precedence.
type Query struct {
	// AgentTier keeps skills whose invokable_by includes it (the pool of
	// an agent of that tier).
	AgentTier skill.AgentTier
	// Tier keeps skills of that skill tier (1–3); 0 keeps all.
	Tier     int
	Category string
	Scope    string
	// Trust keeps skills of that trust ("first_party", "imported").
	Trust      string
	NamePrefix string
	// Disabled includes disabled skills; Rejected includes rejected ones;
	// Shadowed includes versions hidden by a higher scope.
	Disabled bool
	Rejected bool
	Shadowed bool
	// Full loads each entry's frontmatter, files and diagnostics.
	Full bool
	// Tenant, when set, lists what that tenant's principals see: no other
	// tenant's library, and the tenant's own library skills winning over
	// shared skills with the same identity (listed as shadowed by them).
	// Without it every library is listed, each skill as its own.
	Tenant string
}

// Entry is one skill in query results.
type Entry struct {
	store.Version
	// ShadowedBy is set on a version hidden by another directory.
	ShadowedBy string `json:"shadowed_by,omitempty"`
}

// State is how a listed skill stands: "rejected" (invalid), "shadowed"
// (hidden by a version of higher precedence), "disabled" or "enabled".
func (e Entry) State() string {
	switch {
	case !e.Valid:
		return "rejected"
	case e.ShadowedBy != "":
		return "shadowed"
	case !e.Enabled:
		return "disabled"
	}
	return "enabled"
}

// List returns the skills matching q, ordered by identity.
func (r *Registry) List(ctx context.Context, q Query) ([]Entry, error) {
	// A skill's trust is its root's: a trust that no root has selects
	// nothing, and the versions need not be read (at 100,000 skills, the
	// gateway's search for first_party skills on every reload would read
	// them all to find none).
	if q.Trust != "" {
		roots, err := r.store.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(roots, func(rt store.Root) bool { return trustOf(rt.Trust) == q.Trust }) {
			return nil, nil
		}
	}
	// Precedence is decided over every root, before filters that could
	// hide the winner.
	all, err := r.store.Versions(ctx, store.Filter{Brief: !q.Full})
	if err != nil {
		return nil, err
	}
	winners, shadows := resolve(all)
	var out []Entry
	// own are the valid skills of q.Tenant's library, by identity.
	own := map[string]string{}
	visible := func(v store.Version) bool {
		t := discover.TenantOf(v.Scope, v.Root)
		return q.Tenant == "" || t == "" || t == q.Tenant
	}
	if q.Tenant != "" {
		for _, v := range winners {
			if v.Valid && discover.TenantOf(v.Scope, v.Root) == q.Tenant {
				own[v.Key] = v.Dir
			}
		}
	}
	for _, v := range winners {
		if !visible(v) {
			continue
		}
		e := Entry{Version: v}
		if w, ok := own[v.Key]; ok && w != v.Dir {
			if !q.Shadowed {
				continue
			}
			e.ShadowedBy = w
		}
		out = append(out, e)
	}
	if q.Shadowed {
		byDir := map[string]store.Version{}
		for _, v := range all {
			byDir[v.Dir] = v
		}
		for _, s := range shadows {
			if v := byDir[s.Loser]; visible(v) {
				out = append(out, Entry{Version: v, ShadowedBy: s.Winner})
			}
		}
	}
	filtered := out[:0]
	for _, e := range out {
		if keep(e, q) {
			filtered = append(filtered, e)
		}
	}
	return filtered, nil
}

func keep(e Entry, q Query) bool {
	switch {
	case !e.Valid && !q.Rejected:
		return false
	case !e.Enabled && !q.Disabled:
		return false
	case q.Tier != 0 && e.Tier != q.Tier:
		return false
	case q.Category != "" && e.Category != q.Category:
		return false
	case q.Scope != "" && e.Scope != q.Scope:
		return false
	case q.Trust != "" && e.Trust != q.Trust:
		return false
	case q.NamePrefix != "" && !strings.HasPrefix(e.Name, q.NamePrefix):
		return false
	case q.AgentTier != "":
		for _, t := range e.InvokableBy {
			if t == string(q.AgentTier) {
				return true
			}
		}
		return false
	}
	return true
}

// Get returns the skill a user means by name: an exact identity
// ("escrituras/compraventa"), else a bare name that only one category uses.
// It considers valid skills that win precedence, enabled or not.
func (r *Registry) Get(ctx context.Context, name string) (*Entry, error) {
	es, err := r.List(ctx, Query{Disabled: true, Full: true})
	if err != nil {
		return nil, err
	}
	var byName []Entry
	for _, e := range es {
		if e.Key == name {
			return &e, nil
		}
		if e.Name == name {
			byName = append(byName, e)
		}
	}
	switch len(byName) {
	case 0:
		return nil, errorf(ErrNotFound, "%q; run 'skillgate ls' to see the skills, or 'skillgate scan' to refresh", name)
	case 1:
		return &byName[0], nil
	}
	keys := make([]string, len(byName))
	for i, e := range byName {
		keys[i] = e.Key
	}
	return nil, errorf(ErrAmbiguous, "%q is %s; name one of them with its category", name, strings.Join(keys, ", "))
}

// Details is everything known about one skill: the version in effect, the
// versions it shadows, rejected versions at the same name, and history.
type Details struct {
	Entry    *Entry          `json:"skill"`
	Shadowed []store.Version `json:"shadowed"`
	History  []store.Version `json:"history"`
}

// Show returns the details of a skill by name or identity. A rejected
// skill is found by its name too, so its reasons can be read.
func (r *Registry) Show(ctx context.Context, name string) (*Details, error) {
	e, err := r.Get(ctx, name)
	if err != nil {
		rej, lerr := r.List(ctx, Query{Disabled: true, Rejected: true, Full: true})
		if lerr != nil {
			return nil, lerr
		}
		for _, x := range rej {
			if !x.Valid && (x.Name == name || x.Rel == name || x.Dir == name) {
				x := x
				return &Details{Entry: &x, Shadowed: []store.Version{}, History: []store.Version{}}, nil
			}
		}
		return nil, err
	}
	d := &Details{Entry: e, Shadowed: []store.Version{}, History: []store.Version{}}
	same, err := r.store.Versions(ctx, store.Filter{Key: e.Key, History: true})
	if err != nil {
		return nil, err
	}
	for _, v := range same {
		switch {
		case v.Current && v.Dir != e.Dir:
			d.Shadowed = append(d.Shadowed, v)
		case !v.Current:
			d.History = append(d.History, v)
		}
	}
	return d, nil
}

// ScopeImported is the scope of the skills installed through the install
// pipeline ([Registry.SyncImported]): below every configured root in
// precedence, and never a root a scan walks.
const ScopeImported = store.ScopeImported

// trustOf is a root's trust, "" read as imported.
func trustOf(t string) string {
	if t == "" {
		return string(capability.TrustImported)
	}
	return t
}

// WriteEntries writes entries as the table of 'skillgate ls': a rejected
// skill is named by its directory, descriptions are cut to one line of 60
// characters.
func WriteEntries(w io.Writer, es []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTIER\tINVOKABLE BY\tSCOPE\tTRUST\tSTATE\tDESCRIPTION")
	for _, e := range es {
		state := e.State()
		name := e.Key
		if !e.Valid {
			name = e.Rel
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", name, e.Tier, strings.Join(e.InvokableBy, ","), e.Scope, e.Trust, state, oneLine(e.Description, 60))
	}
	return tw.Flush()
}

// oneLine folds s onto one line of at most n characters, ending in "…"
// when it was cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// WriteHead writes the first part of 'skillgate show': the skill's
// metadata, state, location and trust. Where an install came from and its
// signature, which the registry does not hold, go between WriteHead and
// WriteTail.
func (d *Details) WriteHead(w io.Writer) {
	e := d.Entry
	fmt.Fprintf(w, "name:         %s\n", e.Name)
	fmt.Fprintf(w, "identity:     %s\n", e.Key)
	fmt.Fprintf(w, "description:  %s\n", e.Description)
	fmt.Fprintf(w, "tier:         %d (invokable by %s)\n", e.Tier, strings.Join(e.InvokableBy, ", "))
	if e.Category != "" {
		fmt.Fprintf(w, "category:     %s\n", e.Category)
	}
	if e.Version.Version != "" {
		fmt.Fprintf(w, "version:      %s\n", e.Version.Version)
	}
	state := "enabled"
	if !e.Valid {
		state = "rejected"
	} else if !e.Enabled {
		state = "disabled"
	}
	fmt.Fprintf(w, "state:        %s\n", state)
	fmt.Fprintf(w, "location:     %s\n", e.File)
	fmt.Fprintf(w, "source:       %s (%s)\n", e.Root, e.Scope)
	fmt.Fprintf(w, "trust:        %s\n", e.Trust)
}

// WriteTail writes the second part of 'skillgate show': the digest, when
// the skill was seen, its files, diagnostics, the skills it shadows and
// its history.
func (d *Details) WriteTail(w io.Writer) {
	e := d.Entry
	if e.Digest != "" {
		fmt.Fprintf(w, "digest:       %s\n", e.Digest)
	}
	fmt.Fprintf(w, "first seen:   %s\n", e.FirstSeen.Format("2006-01-02 15:04:05Z"))
	fmt.Fprintf(w, "last seen:    %s\n", e.LastSeen.Format("2006-01-02 15:04:05Z"))
	var files []struct {
		Path string `json:"path"`
		Size int64  `json:"size"`
	}
	_ = json.Unmarshal(e.Files, &files)
	fmt.Fprintf(w, "files:        %d\n", len(files))
	for _, f := range files {
		fmt.Fprintf(w, "  %s (%d bytes)\n", f.Path, f.Size)
	}
	var diags []skill.Diagnostic
	_ = json.Unmarshal(e.Diagnostics, &diags)
	for _, dg := range diags {
		fmt.Fprintf(w, "%-13s %s\n", string(dg.Severity)+":", dg.Message)
	}
	for _, s := range d.Shadowed {
		fmt.Fprintf(w, "shadows:      %s (%s)\n", s.Dir, s.Scope)
	}
	for _, h := range d.History {
		fmt.Fprintf(w, "history:      %s (%s → %s)\n", h.Digest, h.FirstSeen.Format("2006-01-02 15:04"), h.LastSeen.Format("2006-01-02 15:04"))
	}
}
