package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Capability ids name their skill ("notes:fs/write_file") since skills may
// share server ids; grants stored before that named only the server and the
// tool ("fs/write_file") and so covered that tool in every skill that names
// a server "fs". scopeGrants rewrites every such grant that is still in
// force, before the engine loads its grants, in one transaction with one
// "grant.scope" audit record per grant saying what happened (actor
// "system"):
//
//   - a pattern whose server part has a '*' ("*", "*/read_file") was
//     written to span servers; it becomes "*:" + pattern, which matches
//     exactly the capabilities it matched before;
//   - otherwise, when the capabilities the pattern matches belong to one
//     installed skill (any install with an approved manifest that is not
//     removed or rejected), the grant is bound to that skill;
//   - otherwise (several skills, or none) it is revoked: binding it to one
//     of them would be a guess, and to all of them would keep the leak. The
//     record lists the candidates; an operator grants again the one meant.
//
// Grants already in the new form are left alone, so this runs once per
// grant. It reports whether it changed any.
func scopeGrants(ctx context.Context, st Store, inForce []store.Grant) (bool, error) {
	var old []store.Grant
	for _, g := range inForce {
		if g.Capability != "*" && !strings.Contains(g.Capability, ":") {
			old = append(old, g)
		}
	}
	if len(old) == 0 {
		return false, nil
	}
	offered, err := installedCapabilities(ctx, st)
	if err != nil {
		return false, fmt.Errorf("scope grants: %w", err)
	}
	cs := make([]store.GrantRescope, 0, len(old))
	for _, g := range old {
		to, why := scopeGrant(g.Capability, offered)
		data := map[string]any{"grant": g.ID, "principal": g.Principal, "from": g.Capability}
		subject := to
		if to != "" {
			data["to"] = to
		} else {
			data["revoked"] = true
			subject = g.Capability
		}
		rec, err := grantRecord(time.Time{}, "system", "grant.scope", subject, why, data) // the store's time
		if err != nil {
			return false, fmt.Errorf("scope grant %s: %w", g.ID, err)
		}
		cs = append(cs, store.GrantRescope{ID: g.ID, From: g.Capability, To: to, Record: rec})
	}
	if err := st.RescopeGrants(ctx, cs, audit.SealStored); err != nil {
		return false, err
	}
	return true, nil
}

// scopeGrant decides the new form of an old grant pattern: the pattern to
// store, or "" to revoke it, and why, for the audit record. offered maps
// each installed skill to its capabilities' "server/tool" names.
func scopeGrant(pattern string, offered map[string][]string) (to, why string) {
	ext, _, _ := strings.Cut(pattern, "/")
	if strings.Contains(ext, "*") {
		return "*:" + pattern, fmt.Sprintf("capability ids now name their skill; %s spans servers, so it now reads *:%s and covers exactly what it covered before", pattern, pattern)
	}
	var skills []string
	for sk, names := range offered {
		if slices.ContainsFunc(names, func(n string) bool { return constraint.MatchWildcard(pattern, n) }) {
			skills = append(skills, sk)
		}
	}
	slices.Sort(skills)
	switch len(skills) {
	case 1:
		return skills[0] + ":" + pattern, fmt.Sprintf("capability ids now name their skill; %s is offered only by skill %s, so the grant is bound to it", pattern, skills[0])
	case 0:
		return "", fmt.Sprintf("capability ids now name their skill; no installed skill offers %s, so the grant was revoked rather than left to cover a skill installed later; grant it again as skill:%s", pattern, pattern)
	}
	var cands []string
	for _, sk := range skills {
		cands = append(cands, sk+":"+pattern)
	}
	return "", fmt.Sprintf("capability ids now name their skill; %s is offered by %d skills (%s), so the grant was revoked rather than extended to all of them; grant it again for the one meant", pattern, len(skills), strings.Join(cands, ", "))
}

// installedCapabilities returns, per skill key, the "server/tool" names of
// the approved manifests of installs that are not removed or rejected.
func installedCapabilities(ctx context.Context, st Store) (map[string][]string, error) {
	var states []store.InstallState
	for _, s := range store.InstallStates {
		if s != store.StateRemoved && s != store.StateRejected {
			states = append(states, s)
		}
	}
	ins, err := st.Installs(ctx, store.InstallFilter{States: states})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, in := range ins {
		if in.Manifest == nil {
			continue
		}
		var m struct {
			Capabilities []struct {
				ExtensionID  string `json:"extensionId"`
				CapabilityID string `json:"capabilityId"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(in.Manifest, &m); err != nil {
			return nil, fmt.Errorf("manifest of %s: %w", in.Key, err)
		}
		for _, c := range m.Capabilities {
			out[in.Key] = append(out[in.Key], c.ExtensionID+"/"+c.CapabilityID)
		}
	}
	return out, nil
}
