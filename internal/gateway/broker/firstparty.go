package broker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// FirstPartySource lists the registry's skills; *registry.Registry
// implements it. The broker serves the capabilities of the enabled, valid
// skills of trust first_party that ship a manifest.json.
type FirstPartySource interface {
	List(ctx context.Context, q registry.Query) ([]registry.Entry, error)
}

// CredentialCheck returns the credentials among names (those a skill's
// servers reference, sorted) that are not configured for p: a first_party
// capability is dormant for p (not listed, not callable) while any is
// missing. It runs on every listing and every call of a first_party
// capability, so it must not do I/O. [CredentialsFrom] looks names up the
// same for every principal (the process environment); a per-principal
// credential store replaces it.
type CredentialCheck func(ctx context.Context, p capability.Principal, skill string, names []string) (missing []string)

// CredentialsFrom is the CredentialCheck of a lookup: a credential is
// configured, for every principal, when lookup finds it.
func CredentialsFrom(lookup mcpclient.CredentialLookup) CredentialCheck {
	return func(_ context.Context, _ capability.Principal, _ string, names []string) []string {
		var missing []string
		for _, n := range names {
			if lookup == nil {
				missing = append(missing, n)
				continue
			}
			if _, ok := lookup(n); !ok {
				missing = append(missing, n)
			}
		}
		return missing
	}
}

// CredentialsOf is the CredentialCheck of a per-principal credential
// source (the credential store: agent, then tenant, then the process
// environment): a credential is configured for p when it resolves for p.
func CredentialsOf(src mcpclient.CredentialSource) CredentialCheck {
	return func(_ context.Context, p capability.Principal, _ string, names []string) []string {
		var missing []string
		for _, n := range names {
			if _, ok := src.Resolve(p, n); !ok {
				missing = append(missing, n)
			}
		}
		return missing
	}
}

// FirstPartyLoad is what [ReadFirstParty] found: the skills it serves and
// the problems of those it could not read.
type FirstPartyLoad struct {
	Skills   []Skill
	Problems []string
}

// ReadFirstParty reads the first_party skills of src: for each enabled,
// valid skill of trust first_party, its mcp.json and its shipped
// manifest.json (the same format as an approved install manifest, see
// docs/schemas/manifest.v1.json; its risk metadata stands in for an
// operator's approval, so every risk field must be known). A skill without
// manifest.json serves no capability (instructions only). A skill whose
// files do not parse is left out with a problem naming the file. Whether
// its credentials are configured is decided per principal, by the broker
// ([Options.Configured]).
func ReadFirstParty(ctx context.Context, src FirstPartySource) (*FirstPartyLoad, error) {
	es, err := src.List(ctx, registry.Query{Trust: string(capability.TrustFirstParty), Full: false})
	if err != nil {
		return nil, fmt.Errorf("first_party skills: %w", err)
	}
	out := &FirstPartyLoad{}
	for _, e := range es {
		s, err := readFirstParty(e)
		switch {
		case err != nil:
			out.Problems = append(out.Problems, fmt.Sprintf("first_party skill %s: %v", e.Key, err))
		case s != nil:
			out.Skills = append(out.Skills, *s)
		}
	}
	return out, nil
}

// readFirstParty reads one first_party skill; nil when it ships no
// manifest.json.
func readFirstParty(e registry.Entry) (*Skill, error) {
	mpath := filepath.Join(e.Dir, manifest.FileApproved)
	mb, err := fileinfo.ReadRegular(mpath, manifest.MaxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := manifest.Parse(mb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	if m.SkillID != e.Key {
		return nil, fmt.Errorf("%s: skillId is %q but the skill is %q: fix skillId", mpath, m.SkillID, e.Key)
	}
	if m.Approval == nil {
		m.Approval = &manifest.Approval{By: "first_party root " + e.Root, At: e.LastSeen, Trust: capability.TrustFirstParty}
	}
	if err := m.Validate(true); err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	cpath := filepath.Join(e.Dir, "mcp.json")
	cb, err := fileinfo.ReadRegular(cpath, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("the manifest names servers but %w", err)
	}
	cfg, err := mcpclient.ParseConfig(cb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpath, err)
	}
	s := &Skill{Key: e.Key, Digest: e.Digest, Dir: e.Dir, Manifest: m, Servers: map[string]mcpclient.ServerDecl{}, Blocked: map[string]string{},
		Tier: e.Tier, InvokableBy: e.InvokableBy, Trust: capability.TrustFirstParty, ApprovedTrust: approvedTrust(m)}
	for _, p := range m.Providers {
		d, ok := cfg.Server(p.ServerID)
		if !ok {
			return nil, fmt.Errorf("%s: providers name server %q, which %s does not declare", mpath, p.ServerID, cpath)
		}
		s.Servers[p.ServerID] = d
	}
	// Its backends.yaml, when it ships one, serves executors as an
	// approved provider skill's does (a file that cannot be read serves
	// none; its mappings are compiled and checked when the broker builds).
	s.Backends, _ = ReadBackends(e.Dir)
	return s, nil
}

// LoadFirstParty returns an Options.Load serving the first_party skills
// of src ([ReadFirstParty]); problems are logged.
func LoadFirstParty(src FirstPartySource, log *slog.Logger) func(context.Context) ([]Skill, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context) ([]Skill, error) {
		l, err := ReadFirstParty(ctx, src)
		if err != nil {
			return nil, err
		}
		for _, p := range l.Problems {
			log.WarnContext(ctx, "first_party skill not served", "problem", p)
		}
		return l.Skills, nil
	}
}

// LoadAll returns an Options.Load serving the skills of every load, in
// order; a skill key served by an earlier load is not served again.
func LoadAll(loads ...func(context.Context) ([]Skill, error)) func(context.Context) ([]Skill, error) {
	return func(ctx context.Context) ([]Skill, error) {
		var out []Skill
		seen := map[string]bool{}
		for _, load := range loads {
			ss, err := load(ctx)
			if err != nil {
				return nil, err
			}
			for _, s := range ss {
				if !seen[s.Key] {
					seen[s.Key] = true
					out = append(out, s)
				}
			}
		}
		return out, nil
	}
}

// ShippedProviders returns install.Options.Shipped over src: the
// first_party skills the gateway serves ([ReadFirstParty]), each with its
// servers, its shipped manifest's capabilities as tools and its
// backends.yaml, so that promote_provider detection and apply take them
// beside the installs. Skills that do not read are left out, as the
// gateway leaves them out.
func ShippedProviders(src FirstPartySource) func(context.Context) ([]install.ShippedProvider, error) {
	return func(ctx context.Context) ([]install.ShippedProvider, error) {
		fp, err := ReadFirstParty(ctx, src)
		if err != nil {
			return nil, err
		}
		out := make([]install.ShippedProvider, 0, len(fp.Skills))
		for _, s := range fp.Skills {
			sp := install.ShippedProvider{Key: s.Key, Servers: map[string]capability.RedactedServer{}, Backends: s.Backends, Dir: s.Dir, Digest: s.Digest, Decls: s.Servers}
			for id, d := range s.Servers {
				sp.Servers[id] = d.Redacted()
			}
			for _, c := range s.Manifest.Capabilities {
				sp.Tools = append(sp.Tools, capability.Tool{ExtensionID: c.ExtensionID, CapabilityID: c.CapabilityID,
					Title: c.Title, Description: c.Description, InputSchema: c.InputSchema, OutputSchema: c.OutputSchema})
			}
			out = append(out, sp)
		}
		return out, nil
	}
}
