package install

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// MaxSettings bounds the settings of one approval.
const MaxSettings = manifest.MaxCapabilities

// ParseSettings reads the operator's settings as the CLI's flags and the
// console's fields spell them: each constraints entry
// "serverId/tool=JSON" (a constraint set; {} removes the proposal's), each
// approvals entry "serverId/tool=by-risk|always|never". A capability may
// appear in both, once in each.
func ParseSettings(constraints, approvals []string) ([]manifest.Setting, error) {
	if len(constraints)+len(approvals) > MaxSettings {
		return nil, fmt.Errorf("%w: %d settings, more than %d", ErrUsage, len(constraints)+len(approvals), MaxSettings)
	}
	var out []manifest.Setting
	at := map[string]int{}
	get := func(flag, entry string) (*manifest.Setting, string, error) {
		name, value, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, "", fmt.Errorf("%w: %s %q: write it as serverId/tool=VALUE", ErrUsage, flag, clipText(entry))
		}
		i, seen := at[name]
		if !seen {
			i = len(out)
			at[name] = i
			out = append(out, manifest.Setting{Capability: name})
		}
		return &out[i], value, nil
	}
	for _, e := range constraints {
		st, v, err := get("--constraints", e)
		if err != nil {
			return nil, err
		}
		if st.Constraints != nil {
			return nil, fmt.Errorf("%w: --constraints %s is given twice; give one constraint set per capability", ErrUsage, st.Capability)
		}
		if strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("%w: --constraints %s= is empty: give a constraint set such as {\"allowedDomains\":[\"example.com\"]}, or {} to remove the proposal's", ErrUsage, st.Capability)
		}
		st.Constraints = json.RawMessage(v)
	}
	for _, e := range approvals {
		st, v, err := get("--approval", e)
		if err != nil {
			return nil, err
		}
		if st.CallApproval != "" {
			return nil, fmt.Errorf("%w: --approval %s is given twice", ErrUsage, st.Capability)
		}
		a, err := capability.ParseCallApproval(strings.TrimSpace(v))
		if err != nil || v == "" {
			return nil, fmt.Errorf("%w: --approval %s=%s: use by-risk, always or never", ErrUsage, st.Capability, clipText(v))
		}
		st.CallApproval = a
	}
	return out, nil
}

func clipText(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:80], "") + "…"
	}
	return s
}

// applySettings applies the operator's settings to m, the manifest an
// approval of in is about to record, with the settings of the skill's
// newest approved version carried over for the capabilities the operator
// leaves alone, checks each against the policy engine's rules
// ([policy.CheckApproval]) and records them in rep.
func (s *Service) applySettings(ctx context.Context, in store.Install, rep *manifest.Report, m *manifest.Manifest, given []manifest.Setting, actor string) error {
	byName := map[string]int{}
	for i, c := range m.Capabilities {
		byName[c.Name()] = i
	}
	if len(given) > MaxSettings {
		return fmt.Errorf("%w: %d settings, more than %d", ErrUsage, len(given), MaxSettings)
	}
	// The settings of the newest approved version, for the capabilities
	// approved again: what a setting leaves unsaid keeps its value.
	prior, from, err := s.priorSettings(ctx, in)
	if err != nil {
		return err
	}
	effective := map[string]manifest.Setting{}
	for _, p := range prior {
		if _, ok := byName[p.Capability]; !ok {
			continue // not approved this time: the setting lapses
		}
		if from != in.Digest {
			p.From = from
		}
		effective[p.Capability] = p
	}
	seen := map[string]bool{}
	for _, g := range given {
		if _, ok := byName[g.Capability]; !ok {
			names := make([]string, 0, len(m.Capabilities))
			for _, c := range m.Capabilities {
				names = append(names, c.Name())
			}
			return fmt.Errorf("%w: a setting for %q: this approval of %s approves no such capability; it approves: %s", ErrUsage, clipText(g.Capability), in.Key, strings.Join(names, ", "))
		}
		if seen[g.Capability] {
			return fmt.Errorf("%w: %s has two settings; give one per capability", ErrUsage, g.Capability)
		}
		seen[g.Capability] = true
		st := effective[g.Capability]
		st.Capability, st.By, st.At, st.From = g.Capability, actor, s.now().UTC(), ""
		if g.CallApproval != "" {
			a, err := capability.ParseCallApproval(string(g.CallApproval))
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrUsage, g.Capability, err)
			}
			if a == capability.CallApprovalByRisk {
				a = ""
			}
			st.CallApproval = a
		}
		if g.Constraints != nil {
			set, err := constraint.Parse(g.Constraints)
			if err != nil {
				return fmt.Errorf("%w: %s: constraints: %v", ErrUsage, g.Capability, err)
			}
			if st.Constraints, err = json.Marshal(set); err != nil {
				return err
			}
		}
		effective[g.Capability] = st
	}
	rep.Settings = nil
	for _, name := range slices.Sorted(maps.Keys(effective)) {
		st := effective[name]
		c := &m.Capabilities[byName[name]]
		var set constraint.Set
		if st.Constraints != nil {
			if set, err = constraint.Parse(st.Constraints); err != nil {
				return fmt.Errorf("%w: %s: constraints carried from %s: %v", ErrUsage, name, st.From, err)
			}
			c.Constraints = nil
			if !set.IsZero() {
				c.Constraints = st.Constraints
			}
		} else if len(c.Constraints) > 0 {
			if set, err = constraint.Parse(c.Constraints); err != nil {
				return fmt.Errorf("%w: %s: the proposal's constraints: %v; replace them with --constraints %s=SET", ErrUsage, name, err, name)
			}
		}
		c.CallApproval = st.CallApproval
		pc := policy.Capability{ExtensionID: c.ExtensionID, CapabilityID: c.CapabilityID,
			RiskLevel: c.Risk.RiskLevel.Value, SideEffects: c.Risk.SideEffects.Value, DataEgress: c.Risk.DataEgress.Value,
			Constraints: set, Approval: c.CallApproval, InputSchema: c.InputSchema}
		if err := policy.CheckApproval(pc); err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		rep.Settings = append(rep.Settings, st)
	}
	return nil
}

// priorSettings returns the settings recorded with the newest approved
// version of in's skill (in itself when it is approved: a re-approval
// after drift keeps them) and that version's digest.
func (s *Service) priorSettings(ctx context.Context, in store.Install) ([]manifest.Setting, string, error) {
	rows, err := s.st.Installs(ctx, store.InstallFilter{Key: in.Key, States: store.ApprovedStates})
	if err != nil {
		return nil, "", err
	}
	for _, r := range rows { // newest first
		if r.Key != in.Key || len(r.Report) == 0 {
			continue
		}
		rep, err := manifest.ParseReport(r.Report)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %s: %w", ErrStorage, r.Key, err)
		}
		return rep.Settings, r.Digest, nil
	}
	return nil, "", nil
}
