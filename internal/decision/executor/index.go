package executor

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// Facts tells the resolver whether a backend is live for the principal of
// a listing or a call: the caller binds the principal and reads skill
// state, approvals, drift, credentials, scope and policy ([Off]).
type Facts interface {
	Off(b *Backend) Off
}

// FactsFunc adapts a function to [Facts].
type FactsFunc func(b *Backend) Off

// Off implements [Facts].
func (f FactsFunc) Off(b *Backend) Off { return f(b) }

// CredentialCheck reports which of the credential names a backend's
// server needs are not configured for principal p, in the order given; a
// nil result means all are. The broker is given one; [EnvCredentials]
// reads the process environment.
type CredentialCheck func(p capability.Principal, names []string) (missing []string)

// EnvCredentials is the credential check that reads the process
// environment through lookup (os.LookupEnv): the same for every principal.
func EnvCredentials(lookup func(string) (string, bool)) CredentialCheck {
	return func(_ capability.Principal, names []string) []string {
		var missing []string
		for _, n := range names {
			if v, ok := lookup(n); !ok || v == "" {
				missing = append(missing, n)
			}
		}
		return missing
	}
}

// Index is the executors that have backends, each with its backends in
// fallback order (provider name, then skill key). It is immutable and
// safe for concurrent use; build a new one when backends change.
type Index struct {
	entries  []indexEntry // by executor name
	byName   map[string]int
	backends int // how many in all
}

type indexEntry struct {
	ex       *Executor
	backends []*Backend
}

// NewIndex indexes backends by executor. Two backends of one provider
// skill for one executor cannot both be kept: the first in (provider,
// skill, server, tool) order is.
func NewIndex(backends []*Backend) *Index {
	bs := slices.Clone(backends)
	slices.SortFunc(bs, func(a, b *Backend) int {
		return cmp.Or(strings.Compare(a.Executor.Name, b.Executor.Name), strings.Compare(a.Provider, b.Provider),
			strings.Compare(a.Skill, b.Skill), strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	x := &Index{byName: map[string]int{}}
	for _, b := range bs {
		i, ok := x.byName[b.Executor.Name]
		if !ok {
			i = len(x.entries)
			x.byName[b.Executor.Name] = i
			x.entries = append(x.entries, indexEntry{ex: b.Executor})
		}
		e := &x.entries[i]
		if n := len(e.backends); n > 0 && e.backends[n-1].Skill == b.Skill && e.backends[n-1].Provider == b.Provider {
			continue
		}
		e.backends = append(e.backends, b)
		x.backends++
	}
	return x
}

// Lookup returns the executor named name and its backends, or nil.
func (x *Index) Lookup(name string) (*Executor, []*Backend) {
	i, ok := x.byName[name]
	if !ok {
		return nil, nil
	}
	return x.entries[i].ex, x.entries[i].backends
}

// Len is the number of executors with at least one backend.
func (x *Index) Len() int { return len(x.entries) }

// maxStack is how many backends of one executor Resolve judges without
// allocating.
const maxStack = 8

// Resolve resolves one call of executor name ([Resolve]) with f's facts.
// An executor the index does not know is dormant.
func (x *Index) Resolve(f Facts, name, pin string, prefs Preferences) (Resolution, error) {
	_, bs := x.Lookup(name)
	var buf [maxStack]Candidate
	cands := buf[:0]
	for _, b := range bs {
		cands = append(cands, Candidate{Backend: b, Off: f.Off(b)})
	}
	return Resolve(name, cands, pin, prefs)
}

// LiveExecutor is an executor live for a principal and the providers
// live for it, in name order: the enum of its provider argument.
type LiveExecutor struct {
	Executor  *Executor
	Providers []string
}

// Live lists the executors live under f, in name order: those with at
// least one live backend. A dormant executor is absent. The provider
// lists share one backing array (each capped, so appending to one copies
// it): a listing allocates twice, whatever the catalog's size.
func (x *Index) Live(f Facts) []LiveExecutor {
	out := make([]LiveExecutor, 0, len(x.entries))
	buf := make([]string, 0, x.backends)
	for i := range x.entries {
		e := &x.entries[i]
		start := len(buf)
		for _, b := range e.backends {
			if f.Off(b).Live() && (len(buf) == start || buf[len(buf)-1] != b.Provider) {
				buf = append(buf, b.Provider)
			}
		}
		if n := len(buf); n > start {
			out = append(out, LiveExecutor{Executor: e.ex, Providers: buf[start:n:n]})
		}
	}
	return out
}

// BackendStatus is one backend and its liveness, for `skillgate executors`.
type BackendStatus struct {
	Provider string `json:"provider"`
	Skill    string `json:"skill"`
	Server   string `json:"server"`
	Tool     string `json:"tool"`
	Live     bool   `json:"live"`
	Off      *Off   `json:"off,omitempty"`
}

// ExecutorStatus is one executor, whether it is dormant, and every
// backend with why it is live or off.
type ExecutorStatus struct {
	Name    string `json:"name"`
	Dormant bool   `json:"dormant"`
	// Default is the provider a call naming none goes to, and Why the
	// rule that picks it ([Resolution.Why]); empty when dormant. Set by
	// [Index.Route].
	Default  string          `json:"default,omitempty"`
	Why      string          `json:"why,omitempty"`
	Backends []BackendStatus `json:"backends"`
}

// Status reports every executor of the catalog (those without backends
// too, dormant) with each backend's liveness under f, in name order.
func (x *Index) Status(cat *Catalog, f Facts) []ExecutorStatus {
	out := make([]ExecutorStatus, 0, len(cat.Executors))
	for _, ex := range cat.Executors {
		st := ExecutorStatus{Name: ex.Name, Dormant: true, Backends: []BackendStatus{}}
		_, bs := x.Lookup(ex.Name)
		for _, b := range bs {
			off := f.Off(b)
			s := BackendStatus{Provider: b.Provider, Skill: b.Skill, Server: b.Server, Tool: b.Tool, Live: off.Live()}
			if !off.Live() {
				s.Off = &off
			} else {
				st.Dormant = false
			}
			st.Backends = append(st.Backends, s)
		}
		out = append(out, st)
	}
	return out
}

// Route is [Index.Status] with each live executor's default route under
// prefs filled in.
func (x *Index) Route(cat *Catalog, f Facts, prefs Preferences) []ExecutorStatus {
	st := x.Status(cat, f)
	for i := range st {
		if st[i].Dormant {
			continue
		}
		if r, err := x.Resolve(f, st[i].Name, "", prefs); err == nil {
			st[i].Default, st[i].Why = r.Backend.Provider, r.Why()
		}
	}
	return st
}

// ToolSchema returns the input schema agents see for ex: its own, plus the
// optional provider argument whose enum is providers (the live ones).
func ToolSchema(ex *Executor, providers []string) json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(ex.InputSchema, &s); err != nil {
		return ex.InputSchema
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props[ProviderArg] = map[string]any{
		"type":        "string",
		"enum":        providers,
		"description": "Run it on this provider only. Leave it out unless the user asked for a provider.",
	}
	b, err := json.Marshal(s)
	if err != nil {
		return ex.InputSchema
	}
	return b
}

// WithAccountArg returns schema (an executor's tool schema) with the
// optional account argument ([AccountArg]) added: for an executor with a
// backend whose remote server is reached through the caller's connection.
func WithAccountArg(schema json.RawMessage) json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return schema
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props[AccountArg] = map[string]any{
		"type":        "string",
		"description": "Use this connected account of the provider (its label, like work). Leave it out unless the user named an account.",
	}
	b, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return b
}

// WriteStatus writes the executors of principal (as 'skillgate executors'
// prints them): each executor live or dormant, its default backend and
// why, every backend with why it is live or off, then the mappings
// refused (problems).
func WriteStatus(w io.Writer, principal fmt.Stringer, st []ExecutorStatus, problems []string) {
	fmt.Fprintf(w, "executors for %s\n", principal)
	for _, e := range st {
		state := "live"
		if e.Dormant {
			state = "dormant"
		}
		fmt.Fprintf(w, "\n%s  %s\n", e.Name, state)
		if e.Default != "" {
			fmt.Fprintf(w, "  default: %s\n", e.Why)
		}
		if len(e.Backends) == 0 {
			fmt.Fprintln(w, "  no provider skill declares a backend")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, bk := range e.Backends {
			why := "live"
			if bk.Off != nil {
				why = "off: " + bk.Off.String()
			}
			fmt.Fprintf(tw, "  %s\t%s:%s/%s\t%s\n", bk.Provider, bk.Skill, bk.Server, bk.Tool, why)
		}
		_ = tw.Flush()
	}
	for _, pr := range problems {
		fmt.Fprintf(w, "\nrefused: %s\n", pr)
	}
}
