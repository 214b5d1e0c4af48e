package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// The skills installed skills' MCP servers publish through the MCP Skills
// extension, approved with their install, are relayed here to agents
// (through package mcpskills, which the gateway serves): listed from the
// approved manifest, each file read from the server on demand (never ahead
// of need) and handed on only when it is what the approval bound: the
// listed file, of the approved size and digest, and for SKILL.md the
// approved frontmatter, with the server's current entry for the skill
// (skills/get, asked at every SKILL.md read) still the approved one.
// Anything else is drift: the bytes are dropped, the refusal is audited
// (action skill.read, decision deny), the skill is blocked at once in this
// process and reported through Options.OnSkillDrift, which blocks it in
// the install flow until an operator re-approves it.

var _ skillsext.Published = (*Broker)(nil)

// ResourceReader reads resources and skill entries from installed skills'
// servers; *mcpclient.Pool implements it.
type ResourceReader interface {
	// ReadResource returns the bytes of uri as t's server sends them for
	// who, unverified.
	ReadResource(ctx context.Context, who capability.Principal, t mcpclient.Target, uri string) ([]byte, error)
	// GetSkill returns the server's current entry (skills/get) of the
	// skill whose SKILL.md is at uri, unverified.
	GetSkill(ctx context.Context, who capability.Principal, t mcpclient.Target, uri string) (json.RawMessage, error)
}

// published is one approved published skill as the broker relays it.
type published struct {
	skill       string // the install's key
	approved    manifest.PublishedSkill
	entry       skillsext.Entry // as served onwards: URIs under skill://<path>/
	root        string          // the upstream skill root (URI without /SKILL.md)
	tier        int
	invokableBy []string
	target      mcpclient.Target
}

// visible reports whether p's tier may invoke the install.
func (s *published) visible(p capability.Principal) bool {
	return len(s.invokableBy) == 0 || slices.Contains(s.invokableBy, string(p.Tier))
}

// buildPublished collects the approved, unblocked published skills of the
// imported skills, sorted by path.
func buildPublished(skills []Skill) ([]*published, []string) {
	var out []*published
	var problems []string
	for _, s := range skills {
		if s.Manifest == nil || orImported(s.Trust) != capability.TrustImported {
			continue
		}
		for _, ap := range s.Manifest.PublishedSkills {
			if why, blocked := s.Blocked[ap.Ref()]; blocked {
				problems = append(problems, fmt.Sprintf("skill %s: published skill %s blocked: %s", s.Key, ap.Ref(), why))
				continue
			}
			decl, ok := s.Servers[ap.ServerID]
			if !ok {
				problems = append(problems, fmt.Sprintf("skill %s: published skill %s: server %q is not declared in mcp.json", s.Key, ap.Ref(), ap.ServerID))
				continue
			}
			root, ok := strings.CutSuffix(ap.URI, "/"+skillsext.SkillFile)
			if !ok || ap.Path == "" {
				problems = append(problems, fmt.Sprintf("skill %s: published skill %s has no path", s.Key, ap.Ref()))
				continue
			}
			pins, ok := s.Pins[ap.ServerID]
			if !ok {
				// A server approved for its skills alone: no tool pinned.
				pins = capability.PinSet{Tools: []capability.ToolPin{}}
				for _, pr := range s.Manifest.Providers {
					if pr.ServerID == ap.ServerID && pr.Server != nil {
						pins.Server = *pr.Server
					}
				}
			}
			e := skillsext.Entry{URI: skillsext.Scheme + "://" + ap.Path + "/" + skillsext.SkillFile, Frontmatter: ap.Frontmatter, Dynamic: ap.Dynamic}
			for _, r := range ap.Resources {
				e.Resources = append(e.Resources, skillsext.Resource{
					URI: skillsext.Scheme + "://" + ap.Path + strings.TrimPrefix(r.URI, root), Digest: r.Digest, Size: r.Size})
			}
			out = append(out, &published{skill: s.Key, approved: ap, entry: e, root: root, tier: s.Tier, invokableBy: s.InvokableBy,
				target: mcpclient.Target{Skill: s.Key, Digest: s.Digest, Content: s.Content, Server: decl, Dir: s.Dir, Pins: pins, LeftOut: s.LeftOut[ap.ServerID]}})
		}
	}
	slices.SortFunc(out, func(a, b *published) int { return strings.Compare(a.approved.Path, b.approved.Path) })
	return out, problems
}

// PublishedSkills returns the approved published skills p may see, sorted
// by path, leaving out those blocked since they were loaded.
func (b *Broker) PublishedSkills(_ context.Context, p capability.Principal) []skillsext.PublishedSkill {
	snap := b.snap.Load()
	out := make([]skillsext.PublishedSkill, 0, len(snap.published))
	for _, s := range snap.published {
		if s.visible(p) && !b.skillBlocked(s) {
			out = append(out, skillsext.PublishedSkill{Path: s.approved.Path, Entry: s.entry,
				Origin: skillsext.Origin{Install: s.skill, Server: s.approved.ServerID, URI: s.approved.URI}})
		}
	}
	return out
}

// ReadPublished reads file of the published skill at path for p from its
// server and returns the bytes only when they are the approved ones (see
// [skillsext.Published]).
func (b *Broker) ReadPublished(ctx context.Context, p capability.Principal, path, file string) ([]byte, error) {
	snap := b.snap.Load()
	i, found := slices.BinarySearchFunc(snap.published, path, func(s *published, t string) int { return strings.Compare(s.approved.Path, t) })
	if !found || !snap.published[i].visible(p) || b.skillBlocked(snap.published[i]) {
		return nil, fmt.Errorf("%w: %s", skillsext.ErrNotServed, path)
	}
	s := snap.published[i]
	uri := s.root + "/" + file
	res, listed := s.approved.Find(uri)
	if !listed && !s.approved.Dynamic {
		b.readRecord(ctx, p, s, file, capability.Deny, "not listed in the approved entry")
		return nil, fmt.Errorf("%w: %s is not listed in the approved entry", skillsext.ErrNotServed, uri)
	}
	rd := b.opts.Resources
	if rd == nil {
		return nil, errors.New("no upstream connection to relay published skills")
	}
	if file == skillsext.SkillFile && !s.approved.Dynamic {
		// Loading the skill: the server's current entry must still be
		// the approved one (a file added or resized shows here).
		raw, err := rd.GetSkill(ctx, p, s.target, s.approved.URI)
		if err != nil {
			return nil, err
		}
		if why := entryDrift(s.approved, raw); why != "" {
			return nil, b.drifted(ctx, p, s, file, why)
		}
	}
	content, err := rd.ReadResource(ctx, p, s.target, uri)
	if err != nil {
		return nil, err
	}
	if s.approved.Dynamic {
		if len(content) > skillsext.MaxTotalBytes {
			return nil, b.drifted(ctx, p, s, file, fmt.Sprintf("%s is %d bytes, over the extension's limit of a skill", uri, len(content)))
		}
	} else if err := skillsext.Verify(skillsext.Resource{URI: res.URI, Digest: res.Digest, Size: res.Size}, content); err != nil {
		return nil, b.drifted(ctx, p, s, file, err.Error())
	}
	if file == skillsext.SkillFile {
		held := skillsext.Entry{URI: s.approved.URI, Frontmatter: s.approved.Frontmatter}
		if err := held.VerifyFrontmatter(content); err != nil {
			return nil, b.drifted(ctx, p, s, file, err.Error())
		}
		b.readRecord(ctx, p, s, file, capability.Allow, "verified against the approved entry")
	}
	return content, nil
}

// entryDrift compares a server's current entry with the approved one and
// says what differs ("" when nothing).
func entryDrift(approved manifest.PublishedSkill, raw json.RawMessage) string {
	var e skillsext.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return "the server's entry is invalid: " + err.Error()
	}
	if e.URI != approved.URI {
		return fmt.Sprintf("the server answered the entry of %s", e.URI)
	}
	if e.Dynamic {
		return `its resources are "dynamic" now`
	}
	rs := make([]manifest.SkillResource, len(e.Resources))
	for i, r := range e.Resources {
		rs[i] = manifest.SkillResource{URI: r.URI, Digest: r.Digest, Size: r.Size}
	}
	if manifest.ResourceSetDigest(rs) != approved.SetDigest {
		return "its resource set is not the approved one (a file added, removed, changed or resized)"
	}
	var a, c any
	if json.Unmarshal(approved.Frontmatter, &a) != nil || json.Unmarshal(e.Frontmatter, &c) != nil {
		return "its frontmatter cannot be compared"
	}
	ab, _ := json.Marshal(a)
	cb, _ := json.Marshal(c)
	if string(ab) != string(cb) {
		return "its frontmatter is not the approved one"
	}
	return ""
}

// drifted blocks s (here at once, and through OnSkillDrift in the install
// flow), audits the refusal and returns the error wrapping
// [skillsext.ErrVerify].
func (b *Broker) drifted(ctx context.Context, p capability.Principal, s *published, file, why string) error {
	why = strings.TrimPrefix(why, skillsext.ErrVerify.Error()+": ")
	b.blockSkill(s)
	b.readRecord(ctx, p, s, file, capability.Deny, "verification failed, skill blocked until re-approved: "+why)
	b.log.WarnContext(ctx, "published skill failed verification; blocked", "skill", s.skill, "published", s.approved.Ref(), "file", file, "why", why)
	if f := b.opts.OnSkillDrift; f != nil {
		f(s.skill, s.approved.ServerID, []manifest.SkillDrift{{Skill: s.approved.Ref(), Reason: why}})
	}
	return fmt.Errorf("%w: %s", skillsext.ErrVerify, why)
}

// readRecord audits one relayed read.
func (b *Broker) readRecord(ctx context.Context, p capability.Principal, s *published, file string, d capability.Effect, why string) {
	data, _ := json.Marshal(map[string]string{"skill": s.skill, "published": s.approved.Ref(), "file": file, "setDigest": s.approved.SetDigest})
	b.record(ctx, audit.Record{Time: b.opts.Now(), Actor: "agent:" + p.Tenant + "/" + p.Agent, Action: "skill.read",
		Subject: skillsext.Scheme + "://" + s.approved.Path + "/" + file, Decision: d, Reasons: []string{why}, Data: data})
}

// blockedSkills remembers the published skills blocked by drift in this
// process until the next reload, which reads what the install flow
// recorded.
type blockedSkills struct {
	mu sync.Mutex
	m  map[string]bool // path + "\x00" + setDigest
}

func (s *published) blockKey() string { return s.approved.Path + "\x00" + s.approved.SetDigest }

func (b *Broker) blockSkill(s *published) {
	b.blocked.mu.Lock()
	defer b.blocked.mu.Unlock()
	if b.blocked.m == nil {
		b.blocked.m = map[string]bool{}
	}
	b.blocked.m[s.blockKey()] = true
}

func (b *Broker) skillBlocked(s *published) bool {
	b.blocked.mu.Lock()
	defer b.blocked.mu.Unlock()
	return b.blocked.m[s.blockKey()]
}

func (bs *blockedSkills) reset() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	clear(bs.m)
}
