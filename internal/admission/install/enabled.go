package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// Installed is one enabled imported skill version, as the gateway needs it.
type Installed struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Category    string `json:"category,omitempty"`
	Description string `json:"description"`
	Digest      string `json:"digest"`
	// Content is the digest of the skill tree alone: Digest unless its
	// servers launch fetched packages, which the version's digest binds
	// too.
	Content     string   `json:"content,omitempty"`
	Tier        int      `json:"tier"`
	InvokableBy []string `json:"invokableBy"`
	// Dir is the skill tree (SKILL.md and its files) in managed storage.
	Dir string `json:"dir"`
	// Manifest is the approved manifest (manifest.json).
	Manifest *manifest.Manifest `json:"manifest"`
	// Config is the skill's parsed mcp.json; connect with it and Pins.
	Config *mcpclient.Config `json:"-"`
	// Pins are the approved pins per server id.
	Pins map[string]capability.PinSet `json:"pins"`
	// LeftOut lists per server id the tools it offered at analysis that the
	// approval left out: connections must not report them as drift.
	LeftOut map[string][]string `json:"leftOut,omitempty"`
	// Blocked are approved capabilities not usable now, and why.
	Blocked []BlockedCapability `json:"blocked"`
}

// Enabled returns every enabled imported skill version with its approved
// manifest, declarations, pins and blocked capabilities. It reads the store
// and each version's mcp.json; it never introspects or proposes.
func (s *Service) Enabled(ctx context.Context) ([]Installed, error) {
	rows, err := s.st.Installs(ctx, store.InstallFilter{States: []store.InstallState{store.StateEnabled}})
	if err != nil {
		return nil, err
	}
	out := []Installed{}
	for _, in := range rows {
		m, err := manifest.Parse(in.Manifest)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
		rep, err := manifest.ParseReport(in.Report)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
		tree := filepath.Join(in.Dir, SkillDir)
		cfg := &mcpclient.Config{}
		if b, err := os.ReadFile(filepath.Join(tree, MCPConfigFile)); err == nil {
			if cfg, err = mcpclient.ParseConfig(b); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
			}
		} else if !os.IsNotExist(err) {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
		var prov Provenance
		if len(in.Provenance) > 0 {
			if err := json.Unmarshal(in.Provenance, &prov); err != nil {
				return nil, fmt.Errorf("%w: %s: provenance: %w", ErrStorage, in.Key, err)
			}
		}
		content := contentDigest(in, prov)
		// Servers that launch a package run it from its pinned tree.
		for i, d := range cfg.Servers {
			if cfg.Servers[i], err = withExec(in, d, prov.Packages, false); err != nil {
				return nil, err
			}
		}
		pins := rep.Pins
		if pins == nil {
			pins = map[string]capability.PinSet{}
		}
		inst := Installed{Key: in.Key, Name: in.Name, Category: in.Category, Description: in.Description, Digest: in.Digest, Content: content,
			Tier: in.Tier, InvokableBy: in.InvokableBy, Dir: tree, Manifest: m, Config: cfg, Pins: pins, Blocked: []BlockedCapability{}}
		for _, p := range m.Providers {
			id := p.ServerID
			if lo := leftOut(rep, id); len(lo) > 0 {
				if inst.LeftOut == nil {
					inst.LeftOut = map[string][]string{}
				}
				inst.LeftOut[id] = lo
			}
		}
		for _, c := range keys(in.Blocked) {
			inst.Blocked = append(inst.Blocked, BlockedCapability{Capability: c, Reason: in.Blocked[c]})
		}
		out = append(out, inst)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
