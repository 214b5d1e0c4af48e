package install

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// PublishedPath is the skill path skillgate serves the skill whose
// upstream SKILL.md is at uri under, for server serverID of install key:
// mcp~<install>/<server>/<upstream skill path> ([skillsext.PublishedPrefix]).
// The origin is the install's name, never the server's self-reported
// serverInfo.name, and the prefix keeps these skills apart from every
// scanned or installed skill, so that none shadows another. It is an
// error when uri is not a skill:// SKILL.md URI that can be served
// unencoded.
func PublishedPath(key, serverID, uri string) (string, error) {
	u, err := skillsext.ParseURI(uri)
	if err != nil {
		return "", err
	}
	sp, ok := u.SkillPath()
	if !ok {
		return "", fmt.Errorf("%s is not a SKILL.md URI", strictjson.Quote(uri, 256))
	}
	p := skillsext.PublishedPrefix + key + "/" + serverID + "/" + sp
	if _, err := skillsext.BuildURI(p, skillsext.SkillFile); err != nil {
		return "", fmt.Errorf("skill path %s cannot be served: %w", strictjson.Quote(p, 256), err)
	}
	return p, nil
}

// verifyPublished checks what server serverID of install key publishes
// and returns one report entry per listed skill, in listing order: an
// entry that is malformed, breaks the extension's rules or limits, or
// whose files do not match it (size, digest, a SKILL.md whose frontmatter
// differs from the entry's) is blocked with its problems; nothing it
// served is kept but the entry.
func verifyPublished(key, serverID string, ps *mcpclient.PublishedSkills) []manifest.PublishedSkill {
	out := []manifest.PublishedSkill{}
	for i, pe := range ps.Entries {
		out = append(out, verifyEntry(key, serverID, i, pe))
	}
	return out
}

// maxFrontmatterDepth bounds the nesting of a published skill's
// frontmatter, well inside what the report's strict reading allows.
const maxFrontmatterDepth = 32

// verifyEntry checks one published entry and its files.
func verifyEntry(key, serverID string, i int, pe mcpclient.PublishedEntry) manifest.PublishedSkill {
	p := manifest.PublishedSkill{ServerID: serverID, Frontmatter: json.RawMessage("{}"), Status: manifest.SkillReady}
	problem := func(format string, args ...any) { p.Problems = append(p.Problems, fmt.Sprintf(format, args...)) }
	var e skillsext.Entry
	if err := json.Unmarshal(pe.Raw, &e); err != nil {
		var probe struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(pe.Raw, &probe)
		p.URI = probe.URI
		if p.URI == "" {
			p.URI = fmt.Sprintf("skills[%d]", i)
		}
		problem("%v", err)
		p.Status = manifest.SkillBlocked
		return p
	}
	p.URI, p.Dynamic = e.URI, e.Dynamic
	var fm map[string]json.RawMessage
	// The frontmatter is kept in the report and the manifest, which are
	// read back strictly: no key twice, nesting bounded.
	if err := strictjson.Check(e.Frontmatter, maxFrontmatterDepth); err != nil {
		problem("frontmatter: %v", err)
	} else if err := json.Unmarshal(e.Frontmatter, &fm); err != nil {
		problem("frontmatter: %v", err)
	} else {
		p.Frontmatter = e.Frontmatter
	}
	if err := json.Unmarshal(fm["name"], &p.Name); err != nil || p.Name == "" {
		problem("frontmatter: name is missing or not a string")
	}
	if err := json.Unmarshal(fm["description"], &p.Description); err != nil || p.Description == "" {
		problem("frontmatter: description is missing or not a string")
	}
	if raw, ok := fm[skill.FieldAllowedTools]; ok {
		p.AllowedTools = allowedTools(raw)
	}
	if _, err := PublishedPath(key, serverID, e.URI); err != nil {
		problem("uri: %v (skillgate brokers skill:// URIs without percent-encoding)", err)
	} else if u, _ := skillsext.ParseURI(e.URI); u.Segments[len(u.Segments)-2] != p.Name && p.Name != "" {
		problem("uri: the last segment of the skill path is %q, and the frontmatter's name is %q; the extension requires them equal", u.Segments[len(u.Segments)-2], p.Name)
	} else if !skillsext.ValidName(p.Name) && p.Name != "" {
		problem("frontmatter: name %q is not a valid Agent Skills name (1-64 lowercase letters, digits and single hyphens)", p.Name)
	}
	if pe.Error != "" {
		problem("%s", pe.Error)
	}
	if !e.Dynamic && pe.Error == "" {
		p.Resources = make([]manifest.SkillResource, 0, len(e.Resources))
		for _, r := range e.Resources {
			p.Resources = append(p.Resources, manifest.SkillResource{URI: r.URI, Digest: r.Digest, Size: r.Size})
			if _, err := skillsext.ParseURI(r.URI); err != nil {
				problem("resources: %v", err)
			}
		}
		slices.SortFunc(p.Resources, func(a, b manifest.SkillResource) int { return strings.Compare(a.URI, b.URI) })
		p.SetDigest = manifest.ResourceSetDigest(p.Resources)
		if err := skillsext.CheckLimits(e.Resources); err != nil {
			problem("%v", err)
		}
		read := map[string]bool{}
		for _, f := range pe.Files {
			read[f.URI] = true
		}
		for _, r := range e.Resources {
			if !read[r.URI] {
				problem("%s was not read, so it cannot be verified", r.URI)
			}
		}
		for _, f := range pe.Files {
			if f.Error != "" {
				problem("reading %s: %s", f.URI, f.Error)
				continue
			}
			if err := e.VerifyRead(f.URI, f.Content); err != nil {
				problem("%v", err)
				continue
			}
			if f.URI == e.URI {
				if err := e.VerifyFrontmatter(f.Content); err != nil {
					problem("%v", err)
				}
			}
		}
	}
	switch {
	case len(p.Problems) > 0:
		p.Status = manifest.SkillBlocked
	case e.Dynamic:
		p.Status = manifest.SkillDynamic
	}
	return p
}

// allowedTools reads allowed-tools: a space-separated string (the Agent
// Skills form) or a list of strings.
func allowedTools(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.Fields(s)
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		return l
	}
	return []string{string(raw)}
}

// ApproveOptions is what an operator approves beside the proposal.
type ApproveOptions struct {
	// Only approves just these capabilities ("serverId/tool").
	Only []string
	// AllowDynamic names published skills ("serverId/uri", or the uri
	// alone when one server publishes it) whose resources are "dynamic":
	// they offer no integrity, and are refused unless named here.
	AllowDynamic []string
	// AllowTools names published skills whose frontmatter's
	// allowed-tools the operator approves; every other's is ignored.
	AllowTools []string
	// Settings are the operator's constraints and call approval defaults
	// for approved capabilities ([ParseSettings]); By and At are filled
	// in. Settings of the skill's previous approved version carry over to
	// the capabilities not named here.
	Settings []manifest.Setting
}

// selectPublished returns the published skills of rep an approval serves
// onwards: every ready one, and the dynamic ones the operator allows,
// each with its path and what the operator allowed. Naming a skill that
// does not exist, is blocked, or (for AllowDynamic) is not dynamic is an
// error.
func selectPublished(key string, rep *manifest.Report, o ApproveOptions) ([]manifest.PublishedSkill, error) {
	find := func(flag, ref string) (int, error) {
		var hits []int
		for i, p := range rep.PublishedSkills {
			if p.Ref() == ref || p.URI == ref {
				hits = append(hits, i)
			}
		}
		switch len(hits) {
		case 1:
			return hits[0], nil
		case 0:
			refs := make([]string, 0, len(rep.PublishedSkills))
			for _, p := range rep.PublishedSkills {
				refs = append(refs, p.Ref())
			}
			return 0, fmt.Errorf("%w: %s %s: %s publishes no such skill (write it as serverId/uri); it publishes: %s", ErrUsage, flag, ref, key, strings.Join(refs, ", "))
		}
		return 0, fmt.Errorf("%w: %s %s: several servers publish it; write it as serverId/uri", ErrUsage, flag, ref)
	}
	dyn, tools := map[int]bool{}, map[int]bool{}
	for _, ref := range o.AllowDynamic {
		i, err := find("--allow-dynamic", ref)
		if err != nil {
			return nil, err
		}
		if rep.PublishedSkills[i].Status != manifest.SkillDynamic {
			return nil, fmt.Errorf("%w: --allow-dynamic %s: the skill is %s, not dynamic", ErrUsage, ref, rep.PublishedSkills[i].Status)
		}
		dyn[i] = true
	}
	for _, ref := range o.AllowTools {
		i, err := find("--allow-tools", ref)
		if err != nil {
			return nil, err
		}
		if len(rep.PublishedSkills[i].AllowedTools) == 0 {
			return nil, fmt.Errorf("%w: --allow-tools %s: its frontmatter asks for no allowed-tools", ErrUsage, ref)
		}
		tools[i] = true
	}
	out := []manifest.PublishedSkill{}
	for i, p := range rep.PublishedSkills {
		switch {
		case p.Status == manifest.SkillReady:
		case p.Status == manifest.SkillDynamic && dyn[i]:
			p.DynamicAllowed = true
		case tools[i]:
			return nil, fmt.Errorf("%w: --allow-tools %s: the skill is %s and cannot be approved", ErrUsage, p.Ref(), p.Status)
		default:
			continue
		}
		path, err := PublishedPath(key, p.ServerID, p.URI)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBlocked, p.Ref(), err)
		}
		p.Path, p.ToolsApproved = path, tools[i]
		out = append(out, p)
	}
	return out, nil
}

// skillDrift compares the approved published skills of server serverID
// with what the server publishes now (now, verified): a skill no longer
// published, blocked now, or whose frontmatter or resource set differs is
// drift.
func skillDrift(serverID string, approved, now []manifest.PublishedSkill, listErr string) []manifest.SkillDrift {
	cur := map[string]manifest.PublishedSkill{}
	for _, p := range now {
		if p.ServerID == serverID {
			cur[p.URI] = p
		}
	}
	var out []manifest.SkillDrift
	for _, a := range approved {
		if a.ServerID != serverID {
			continue
		}
		n, ok := cur[a.URI]
		var why string
		switch {
		case !ok && listErr != "":
			why = "its server's skill listing failed: " + listErr
		case !ok:
			why = "the server no longer publishes it"
		case n.Status == manifest.SkillBlocked:
			why = "it fails verification now: " + strings.Join(n.Problems, "; ")
		case n.Dynamic != a.Dynamic:
			why = "its resources changed between a file list and \"dynamic\""
		case n.SetDigest != a.SetDigest:
			why = "its files changed: " + describeSetChange(a.Resources, n.Resources)
		case !jsonEqualRaw(n.Frontmatter, a.Frontmatter):
			why = "its frontmatter changed"
		default:
			continue
		}
		out = append(out, manifest.SkillDrift{Skill: a.Ref(), Reason: why})
	}
	return out
}

// describeSetChange names the files added, removed and changed between
// two resource sets.
func describeSetChange(before, after []manifest.SkillResource) string {
	b := map[string]manifest.SkillResource{}
	for _, r := range before {
		b[r.URI] = r
	}
	var parts []string
	seen := map[string]bool{}
	for _, r := range after {
		seen[r.URI] = true
		old, ok := b[r.URI]
		switch {
		case !ok:
			parts = append(parts, "added "+r.URI)
		case old.Digest != r.Digest:
			parts = append(parts, fmt.Sprintf("%s digest %s → %s", r.URI, old.Digest, r.Digest))
		case old.Size != r.Size:
			parts = append(parts, fmt.Sprintf("%s size %d → %d", r.URI, old.Size, r.Size))
		}
	}
	for _, r := range before {
		if !seen[r.URI] {
			parts = append(parts, "removed "+r.URI)
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// jsonEqualRaw compares two JSON values by content.
func jsonEqualRaw(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// addSkillData records the approved published skills in an approval's
// audit data: each ref with the resource set it is bound to, and what the
// operator allowed.
func addSkillData(data map[string]any, m *manifest.Manifest) {
	if len(m.PublishedSkills) == 0 {
		return
	}
	skills := make([]map[string]any, 0, len(m.PublishedSkills))
	for _, p := range m.PublishedSkills {
		e := map[string]any{"skill": p.Ref(), "path": p.Path, "setDigest": p.SetDigest}
		if p.DynamicAllowed {
			e["dynamicAllowed"] = true
		}
		if p.ToolsApproved {
			e["toolsApproved"] = p.AllowedTools
		}
		skills = append(skills, e)
	}
	data["publishedSkills"] = skills
}

// addSkillProviders adds to m a provider for every server that publishes
// an approved skill and offers no approved capability, so that the
// runtime connects to it to relay reads.
func addSkillProviders(m *manifest.Manifest, rep *manifest.Report) {
	have := map[string]bool{}
	for _, p := range m.Providers {
		have[p.ServerID] = true
	}
	for _, sr := range rep.Servers {
		if have[sr.ServerID] || !slices.ContainsFunc(m.PublishedSkills, func(p manifest.PublishedSkill) bool { return p.ServerID == sr.ServerID }) {
			continue
		}
		have[sr.ServerID] = true
		m.Providers = append(m.Providers, manifest.Provider{Type: "mcp", ServerID: sr.ServerID, Server: sr.Server})
	}
}

// RecordSkillDrift records drift the gateway saw relaying a published
// skill of server serverID of the enabled (or installed, or disabled)
// version of skill key: bytes that failed verification against the
// approved set, or an entry that no longer matches it. Each skill named
// is blocked until re-approved, in one transaction with its audit record
// (action install.drift), as [Service.RecordDrift] blocks capabilities. A
// skill already blocked for the same reason is not recorded again.
func (s *Service) RecordSkillDrift(ctx context.Context, key, serverID string, drift []manifest.SkillDrift, actor string) error {
	if len(drift) == 0 {
		return nil
	}
	unlock, err := s.storage.lock()
	if err != nil {
		return err
	}
	defer unlock()
	in, err := s.served(ctx, key)
	if err != nil {
		return err
	}
	rep, err := manifest.ParseReport(in.Report)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	blocked := map[string]string{}
	for k, v := range in.Blocked {
		blocked[k] = v
	}
	rec := manifest.DriftRecord{ServerID: serverID, At: s.now().UTC(), By: actor, Blocked: []string{}}
	for _, d := range drift {
		if blocked[d.Skill] == "drift: "+d.Reason {
			continue
		}
		blocked[d.Skill] = "drift: " + d.Reason
		rec.Blocked = append(rec.Blocked, d.Skill)
		rec.Skills = append(rec.Skills, d)
	}
	if len(rec.Skills) == 0 {
		return nil
	}
	rep.Drift = append(rep.Drift, rec)
	rj, err := manifest.Marshal(rep)
	if err != nil {
		return err
	}
	raw := json.RawMessage(rj)
	_, err = s.transition(ctx, "drift", transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: in.State,
		Actor: actor, Reason: fmt.Sprintf("drift of published skills on %s: %s blocked until re-approved", serverID, strings.Join(rec.Blocked, ", ")), Action: "install.drift",
		Change: store.InstallChange{Report: &raw, Blocked: &blocked}, Data: map[string]any{"server": serverID, "blocked": rec.Blocked, "skills": rec.Skills}})
	return err
}
