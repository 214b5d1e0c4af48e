package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// LiveTool is one tool an approved skill's server lists now.
type LiveTool struct {
	Tool capability.Tool
	// Pinned reports whether its definition is still the one approved
	// (its pin's digest); false for a tool approved with another
	// definition or not approved at all.
	Pinned bool
}

// LiveTools starts the servers of the approved version of skill key
// exactly as a recheck does (the run-time sandbox, its credentials, its
// pinned packages, the network only where the approved manifest declares
// egress) and returns the tools they list now, by "server/tool", each with
// whether it still matches its approved pin. Nothing is recorded and no
// state changes: it is the smoke check a promote_provider change runs
// before it is applied. A server that fails is an error naming it.
func (s *Service) LiveTools(ctx context.Context, key string) (map[string]LiveTool, error) {
	in, unlock, err := s.lockVersion(ctx, key, store.ApprovedStates...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	old, err := manifest.ParseReport(in.Report)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	m, err := manifest.Parse(in.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	rep, err := s.analyze(ctx, in, &old.Proposal, Introspection{}, m)
	if err != nil {
		return nil, err
	}
	out := map[string]LiveTool{}
	for _, sr := range rep.Servers {
		if sr.Error != nil {
			return nil, fmt.Errorf("%w: %s: server %s failed (%s): %s", ErrBlocked, in.Key, sr.ServerID, sr.Error.Phase, sr.Error.Message)
		}
	}
	for _, c := range rep.Capabilities {
		lt := LiveTool{Tool: c.Tool}
		approved, ok := old.Pins[c.ExtensionID]
		if ok {
			a, okA := approved.Lookup(c.CapabilityID)
			for _, sr := range rep.Servers {
				if sr.ServerID != c.ExtensionID || sr.Pins == nil {
					continue
				}
				now, okN := sr.Pins.Lookup(c.CapabilityID)
				lt.Pinned = okA && okN && a.Digest == now.Digest
			}
		}
		out[c.Tool.Name()] = lt
	}
	return out, nil
}

// ShippedLiveTools starts the servers of shipped (first_party) skill key
// as the gateway starts them (the run-time sandbox, as first_party, with
// the network; credentials from Options.Credentials) and returns the tools
// they list now, by "server/tool". Pinned says the tool's inputSchema is
// the one its shipped manifest.json declares (what agents are told and
// calls are validated against). ErrNotFound when no shipped skill has key.
func (s *Service) ShippedLiveTools(ctx context.Context, key string) (map[string]LiveTool, error) {
	if s.shipped == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	all, err := s.shipped(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: shipped provider skills: %w", ErrStorage, err)
	}
	var sp *ShippedProvider
	for i := range all {
		if all[i].Key == key {
			sp = &all[i]
			break
		}
	}
	if sp == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	shipped := map[string]json.RawMessage{}
	for _, t := range sp.Tools {
		shipped[t.Name()] = t.InputSchema
	}
	out := map[string]LiveTool{}
	for _, id := range slices.Sorted(maps.Keys(sp.Decls)) {
		decl := sp.Decls[id]
		opts := s.mcp
		opts.Dir = sp.Dir
		if s.creds != nil {
			opts.Credentials = s.creds
		}
		switch {
		case s.runtime != nil:
			b, err := s.runtime.Confiner(sandbox.Server{Skill: key, FirstParty: true, Network: true, Dir: sp.Dir, Args: decl.Args, Env: decl.Env})
			if err != nil {
				return nil, fmt.Errorf("%w: %s: server %s: %w", ErrBlocked, key, id, err)
			}
			if b != nil {
				opts.Confine = b
			}
		case s.sandbox != nil:
			sb := *s.sandbox
			sb.Network = true
			opts.Confine = sb
		}
		r, err := mcpclient.Introspect(ctx, decl, &opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: server %s failed: %w", ErrBlocked, key, id, err)
		}
		for _, c := range r.Capabilities {
			want, ok := shipped[c.Tool.Name()]
			out[c.Tool.Name()] = LiveTool{Tool: c.Tool, Pinned: ok && sameJSON(want, c.Tool.InputSchema)}
		}
	}
	return out, nil
}

// sameJSON reports whether a and b are the same JSON value (whatever
// their spacing and key order).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
