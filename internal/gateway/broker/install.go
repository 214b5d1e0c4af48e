package broker

import (
	"context"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// EnabledSource is what the broker reads installed skills from;
// *install.Service implements it.
type EnabledSource interface {
	Enabled(ctx context.Context) ([]install.Installed, error)
}

// LoadInstalled returns an Options.Load that serves the enabled installed
// skills of src, their blocked capabilities left out.
func LoadInstalled(src EnabledSource) func(context.Context) ([]Skill, error) {
	return func(ctx context.Context) ([]Skill, error) {
		ins, err := src.Enabled(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]Skill, 0, len(ins))
		for _, in := range ins {
			s := Skill{Key: in.Key, Digest: in.Digest, Content: in.Content, Dir: in.Dir, Manifest: in.Manifest, Pins: in.Pins, LeftOut: in.LeftOut,
				Servers: map[string]mcpclient.ServerDecl{}, Blocked: map[string]string{},
				Tier: in.Tier, InvokableBy: in.InvokableBy, Trust: capability.TrustImported, ApprovedTrust: approvedTrust(in.Manifest)}
			if in.Config != nil {
				for _, p := range in.Manifest.Providers {
					if d, ok := in.Config.Server(p.ServerID); ok {
						s.Servers[p.ServerID] = d
					}
				}
			}
			for _, b := range in.Blocked {
				s.Blocked[b.Capability] = b.Reason
			}
			if in.Dir != "" {
				// A backends file that cannot be read serves no executor;
				// the skill's capabilities are unaffected.
				s.Backends, _ = ReadBackends(in.Dir)
			}
			out = append(out, s)
		}
		return out, nil
	}
}

// approvedTrust is the trust m was approved for (imported when it does not
// say).
func approvedTrust(m *manifest.Manifest) capability.Trust {
	if m == nil || m.Approval == nil || m.Approval.Trust == "" {
		return capability.TrustImported
	}
	return m.Approval.Trust
}
