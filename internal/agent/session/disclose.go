package session

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/agent/catalog"
	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

// Disclosure defaults.
const (
	// DefaultBudget is the character budget of the discovery fragment
	// (Codex's default for an unknown context window).
	DefaultBudget = 8000
	// DefaultMaxResources caps the files listed per loaded skill.
	DefaultMaxResources = 50
)

// NoSkillsText is the discovery fragment when the principal may use no
// skill at all.
const NoSkillsText = "No skills are available to you."

// DiscloseOptions shapes a disclosure.
type DiscloseOptions struct {
	// Category restricts the discovery fragment to one category.
	Category string
	// Budget is the discovery fragment's size in characters; 0 means
	// DefaultBudget, negative means no limit.
	Budget int
	// MaxResources caps the files listed per loaded skill; 0 means
	// DefaultMaxResources.
	MaxResources int
}

// CatalogItems turns catalog entries into catalog items for agents: seed
// 002's skill_list shape, with Source set to the scope of the root the
// skill came from ("project", "user", "builtin"), never a host path, and no
// location.
func CatalogItems(es []registry.Brief) []catalog.Item {
	out := make([]catalog.Item, 0, len(es))
	for _, e := range es {
		out = append(out, CatalogItem(e))
	}
	return out
}

// CatalogItem is [CatalogItems] of one entry.
func CatalogItem(e registry.Brief) catalog.Item {
	inv := e.InvokableBy
	if inv == nil {
		inv = []string{}
	}
	return catalog.Item{Name: e.Name, Description: e.Description, Tier: e.Tier, InvokableBy: inv,
		Source: e.Scope, Category: e.Category, Version: e.Version, Trust: e.Trust, Location: e.Key}
}

// Discovery renders the discovery fragment for an agent of tier: one line
// saying how to load a skill, then the skills it may use (optionally of one
// category) in skills-ref's <available_skills> XML, where each skill's
// <location> is its category/name identity (what load_skill takes; never a
// host path). The whole fragment fits opts.Budget characters:
// [catalog.Budget] shortens descriptions first, then leaves skills out
// from the end. It returns NoSkillsText when no skill is available.
func Discovery(ctx context.Context, cat Catalog, tier skill.AgentTier, opts DiscloseOptions) (string, error) {
	snap, err := cat.Snapshot(ctx)
	if err != nil {
		return "", fmt.Errorf("session: list skills: %w", err)
	}
	return discovery(snap, tier, opts), nil
}

// discoveryHead precedes the catalog in the discovery fragment.
const discoveryHead = "Skills you can load with the load_skill tool: pass a skill's <location> (its category/name). " +
	"Its instructions are returned and its files appear under /skills/<name>.\n"

// discovery renders the discovery fragment of tier's skills in snap. It
// costs what catalog.Budget costs over the tier's pool; see
// Manager.discovery for the shared copy sessions use.
func discovery(snap *registry.Snapshot, tier skill.AgentTier, opts DiscloseOptions) string {
	var items []catalog.Item
	snap.Skills(tier, opts.Category, func(e registry.Brief) bool {
		items = append(items, CatalogItem(e))
		return true
	})
	if len(items) == 0 {
		return NoSkillsText
	}
	budget := opts.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	if budget > 0 {
		budget = max(budget-utf8.RuneCountInString(discoveryHead), 1)
	}
	body, _ := catalog.Budget(items, catalog.FormatXML, budget)
	return discoveryHead + body
}

// discoveryKey names one rendering of the discovery fragment.
type discoveryKey struct {
	tier     skill.AgentTier
	category string
	budget   int
}

// maxDiscoveries bounds the renderings kept per registry generation (the
// budget and category of the prompt are the agent's to choose).
const maxDiscoveries = 64

// discoveries are the discovery fragments rendered at one registry
// generation, shared by every session: the fragment depends on the
// principal's tier, not on the session, and rendering it costs the whole
// pool.
type discoveries struct {
	mu   sync.Mutex
	snap *registry.Snapshot
	m    map[discoveryKey]string
}

// discovery returns the discovery fragment of tier in snap, rendered once
// per snapshot and arguments.
func (m *Manager) discovery(snap *registry.Snapshot, tier skill.AgentTier, opts DiscloseOptions) string {
	k := discoveryKey{tier: tier, category: opts.Category, budget: opts.Budget}
	if k.budget == 0 {
		k.budget = DefaultBudget
	}
	d := &m.disco
	d.mu.Lock()
	if d.snap != snap {
		d.snap, d.m = snap, map[discoveryKey]string{}
	}
	s, ok := d.m[k]
	d.mu.Unlock()
	if ok {
		return s
	}
	s = discovery(snap, tier, opts)
	d.mu.Lock()
	if d.snap == snap && len(d.m) < maxDiscoveries {
		d.m[k] = s
	}
	d.mu.Unlock()
	return s
}

// Disclose renders what the session's agent should have in its context
// (the "middleware" of seed 003): with no skill loaded, the discovery
// fragment (see [Discovery]); with skills loaded, for each in load order its
// SKILL.md body (frontmatter stripped) wrapped as the Agent Skills client
// guide suggests:
//
//	<skill_content name="compraventa">
//	…body…
//
//	Skill directory: /skills/compraventa
//	Relative paths in this skill are relative to the skill directory.
//	<skill_resources>
//	<file>disclosure_clausulas.md</file>
//	…
//	</skill_resources>
//	</skill_content>
//
// The resource listing is capped at opts.MaxResources files.
func (s *Session) Disclose(ctx context.Context, opts DiscloseOptions) (string, error) {
	if err := s.open(); err != nil {
		return "", err
	}
	skills := s.snapshot()
	if len(skills) == 0 {
		snap, err := s.Catalog(ctx)
		if err != nil {
			return "", err
		}
		return s.m.discovery(snap, s.st.p.Tier, opts), nil
	}
	var b strings.Builder
	for i, l := range skills {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if err := writeSkillContent(ctx, &b, l, opts.MaxResources); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// SkillContent renders the <skill_content> block of one loaded skill, as
// load_skill returns it. Errors: [ErrNotLoaded], [ErrClosed], storage errors.
func (s *Session) SkillContent(ctx context.Context, name string, maxResources int) (string, error) {
	if err := s.open(); err != nil {
		return "", err
	}
	skills := s.snapshot()
	i := findLoaded(skills, name)
	if i < 0 {
		return "", fmt.Errorf("%w: %q", ErrNotLoaded, name)
	}
	var b strings.Builder
	if err := writeSkillContent(ctx, &b, skills[i], maxResources); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeSkillContent(ctx context.Context, b *strings.Builder, l *loaded, maxResources int) error {
	if maxResources <= 0 {
		maxResources = DefaultMaxResources
	}
	body := ""
	content, _, err := blob.ReadAll(ctx, l.store, l.prefix+l.file, skill.MaxFileBytes)
	switch {
	case err == nil:
		body = skill.Parse(content, l.name, skill.Options{Mode: skill.Lenient, Category: l.category}).Body
	case errors.Is(err, blob.ErrNotFound):
		body = "(" + l.file + " is missing; the skill changed since it was scanned)"
	default:
		return fmt.Errorf("session: read %s of %s: %w", l.file, l.key, err)
	}
	files, err := l.store.List(ctx, l.prefix, maxResources+2)
	if err != nil {
		return fmt.Errorf("session: list files of %s: %w", l.key, err)
	}
	fmt.Fprintf(b, "<skill_content name=\"%s\">\n", html.EscapeString(l.name))
	if body != "" {
		b.WriteString(body)
		b.WriteString("\n\n")
	}
	dir := vfs.SkillsPath + "/" + l.mount
	fmt.Fprintf(b, "Skill directory: %s\nRelative paths in this skill are relative to the skill directory.\n<skill_resources>\n", dir)
	n := 0
	for _, in := range files {
		rel := in.Key[len(l.prefix):]
		if rel == l.file {
			continue
		}
		if n == maxResources {
			fmt.Fprintf(b, "<!-- more files: ls %s -->\n", dir)
			break
		}
		fmt.Fprintf(b, "<file>%s</file>\n", html.EscapeString(rel))
		n++
	}
	b.WriteString("</skill_resources>\n</skill_content>")
	return nil
}
