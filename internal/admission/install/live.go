package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
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
		opts, err := s.shippedOptions(*sp, decl)
		if err != nil {
			return nil, err
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

// CallLive starts server of skill key as [Service.LiveTools] (an install)
// or [Service.ShippedLiveTools] (shipped, a first_party skill) does, with
// the approved pins, and calls tool with args once: the smoke call an
// operator asks for when applying a promote_provider change. It returns
// the tool's result; a result the server marks as an error is returned
// with it, for the caller to judge. Nothing is recorded.
func (s *Service) CallLive(ctx context.Context, key string, shipped bool, server, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	decl, opts, pins, unlock, err := s.liveServer(ctx, key, shipped, server)
	if err != nil {
		return nil, err
	}
	defer unlock()
	conn, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{Options: opts, Pins: pins})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: server %s failed: %w", ErrBlocked, key, server, err)
	}
	defer conn.Close()
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("%w: %s: the arguments of %s: %w", ErrUsage, key, tool, err)
	}
	return conn.CallTool(ctx, tool, a)
}

// liveServer prepares server of skill key to start as the smoke checks
// start it: an approved install's as a recheck does (its pinned package,
// credentials and run-time sandbox, with its approved pins), a shipped
// skill's as the gateway does. unlock releases what it holds.
func (s *Service) liveServer(ctx context.Context, key string, shipped bool, server string) (mcpclient.ServerDecl, mcpclient.Options, *capability.PinSet, func(), error) {
	none := func() {}
	if shipped {
		if s.shipped == nil {
			return mcpclient.ServerDecl{}, mcpclient.Options{}, nil, none, fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		all, err := s.shipped(ctx)
		if err != nil {
			return mcpclient.ServerDecl{}, mcpclient.Options{}, nil, none, fmt.Errorf("%w: shipped provider skills: %w", ErrStorage, err)
		}
		for _, sp := range all {
			decl, ok := sp.Decls[server]
			if sp.Key != key || !ok {
				continue
			}
			opts, err := s.shippedOptions(sp, decl)
			return decl, opts, nil, none, err
		}
		return mcpclient.ServerDecl{}, mcpclient.Options{}, nil, none, fmt.Errorf("%w: %s has no server %s", ErrNotFound, key, server)
	}
	in, unlock, err := s.lockVersion(ctx, key, store.ApprovedStates...)
	if err != nil {
		return mcpclient.ServerDecl{}, mcpclient.Options{}, nil, none, err
	}
	fail := func(err error) (mcpclient.ServerDecl, mcpclient.Options, *capability.PinSet, func(), error) {
		unlock()
		return mcpclient.ServerDecl{}, mcpclient.Options{}, nil, none, err
	}
	m, err := manifest.Parse(in.Manifest)
	if err != nil {
		return fail(fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err))
	}
	old, err := manifest.ParseReport(in.Report)
	if err != nil {
		return fail(fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err))
	}
	tree := filepath.Join(in.Dir, SkillDir)
	b, err := os.ReadFile(filepath.Join(tree, MCPConfigFile))
	if err != nil {
		return fail(fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err))
	}
	cfg, err := mcpclient.ParseConfig(b)
	if err != nil {
		return fail(fmt.Errorf("%w: %s/%s: %w", ErrInvalidSkill, in.Key, MCPConfigFile, err))
	}
	decl, ok := cfg.Server(server)
	if !ok {
		return fail(fmt.Errorf("%w: %s has no server %s", ErrNotFound, key, server))
	}
	pkgs, err := packagesOf(in)
	if err != nil {
		return fail(err)
	}
	hide, confined := s.hidden()
	decl, opts, _, err := s.prepareServer(ctx, in, decl, pkgs, serverSetup{hide: hide, confined: confined, approved: m})
	if err != nil {
		return fail(err)
	}
	var pins *capability.PinSet
	if p, ok := old.Pins[server]; ok {
		pins = &p
	}
	return decl, opts, pins, unlock, nil
}

// shippedLaunchTimeout bounds the first start of a shipped server that a
// package manager launches (npx PKG fetches PKG first: 20 to 40 s for
// server-github on a loaded machine here).
const shippedLaunchTimeout = 3 * time.Minute

// shippedOptions are the options a shipped skill's server decl starts
// with: as the gateway starts a first_party server (the run-time sandbox,
// as first_party, with the network), else the introspection sandbox.
func (s *Service) shippedOptions(sp ShippedProvider, decl mcpclient.ServerDecl) (mcpclient.Options, error) {
	key, dir := sp.Key, sp.Dir
	opts := s.mcp
	opts.Dir = dir
	if _, launched, _ := launch.Parse(decl.Command, decl.Args); launched && opts.Limits.InitializeTimeout < shippedLaunchTimeout {
		// A first_party server launched with npx or uvx fetches its
		// package at its first start, as the gateway's first call does.
		opts.Limits.InitializeTimeout = shippedLaunchTimeout
	}
	if s.creds != nil {
		opts.Credentials = s.creds
	}
	switch {
	case s.runtime != nil:
		b, err := s.runtime.Confiner(sandbox.Server{Skill: key, Version: sp.Digest, FirstParty: true, Network: true, Dir: dir, Args: decl.Args, Env: decl.Env})
		if err != nil {
			return opts, fmt.Errorf("%w: %s: server %s: %w", ErrBlocked, key, decl.ID, err)
		}
		if b != nil {
			opts.Confine = b
		}
	case s.sandbox != nil:
		sb := *s.sandbox
		sb.Network = true
		opts.Confine = sb
	}
	return opts, nil
}
