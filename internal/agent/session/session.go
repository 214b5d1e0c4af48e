package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// maxSkillArg bounds a skill name passed to Load or Unload.
const maxSkillArg = 512

// Session is one open handle on an agent session; see [Manager.Open]. All
// handles on the same session share its loaded skills and filesystem.
// Methods are safe for concurrent use; Load and Unload are serialised per
// session.
type Session struct {
	m    *Manager
	st   *state
	once sync.Once
	mu   sync.RWMutex
	done bool
}

// Loaded describes one loaded skill.
type Loaded struct {
	// Key is the skill's identity ("escrituras/compraventa").
	Key      string `json:"skill"`
	Name     string `json:"name"`
	Category string `json:"category,omitempty"`
	// Mount is the skill's directory in the agent filesystem
	// ("/skills/compraventa").
	Mount    string    `json:"mount"`
	LoadedAt time.Time `json:"loaded_at"`
}

func (l *loaded) public() Loaded {
	return Loaded{Key: l.key, Name: l.name, Category: l.category, Mount: vfs.SkillsPath + "/" + l.mount, LoadedAt: l.at}
}

// ID returns the session id, which a client passes to resume the session.
func (s *Session) ID() string { return s.st.id }

// Principal returns who the session belongs to.
func (s *Session) Principal() capability.Principal { return s.st.p }

// FS returns the session's agent filesystem: /workspace, the configured
// mounts, and the loaded skills under /skills.
func (s *Session) FS() *vfs.FS { return s.st.fs }

// Close releases the handle; the session stays in the store and can be
// resumed. Close is idempotent.
func (s *Session) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
		s.m.release(s.st)
	})
	return nil
}

func (s *Session) open() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.done {
		return ErrClosed
	}
	return nil
}

// Catalog returns the catalog snapshot the session's principal sees: its
// tenant's (the shared skills and the tenant's own library, when the
// Manager's Catalog is a [TenantCatalog]); the skills whose invokable_by
// includes its tier (enabled, valid, winning precedence) are those of
// [registry.Snapshot]'s methods called with [Session.Principal]'s tier. The snapshot is shared; it costs one
// read of the registry generation unless the registry changed.
func (s *Session) Catalog(ctx context.Context) (*registry.Snapshot, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	return s.m.available(ctx, s.st.p.Tenant)
}

// Skills returns one page of the skills the session's principal may use,
// by identity; q.AgentTier is set to the principal's. Errors:
// registry.ErrBadPage for arguments out of range, [ErrClosed], storage
// errors.
func (s *Session) Skills(ctx context.Context, q registry.PageQuery) (registry.Page, error) {
	snap, err := s.Catalog(ctx)
	if err != nil {
		return registry.Page{}, err
	}
	q.AgentTier = s.st.p.Tier
	return snap.Page(q)
}

// Loaded returns the loaded skills in load order.
func (s *Session) Loaded() []Loaded {
	s.st.mu.Lock()
	skills := s.st.skills
	s.st.mu.Unlock()
	out := make([]Loaded, len(skills))
	for i, l := range skills {
		out[i] = l.public()
	}
	return out
}

// snapshot returns the loaded skills (an immutable slice).
func (s *Session) snapshot() []*loaded {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.skills
}

// Load loads a skill into the session and returns where it is mounted.
// name is an identity ("escrituras/compraventa") or a bare name that only
// one skill available to the principal has. Loading a loaded skill returns
// its mount again, unless the session reads a copy of the version it
// loaded (see [VersionCopies]) and a newer one was scanned since: then it
// moves to the new version, at the same mount. The mount is /skills/<name>, or
// /skills/<category>--<name> when /skills/<name> is taken by another
// loaded skill (see the package documentation).
//
// Errors: [ErrSkillNotFound] for an unknown skill and, identically, for a
// skill outside the principal's tier; [ErrAmbiguous]; [ErrMountInUse];
// [ErrClosed]; storage errors.
func (s *Session) Load(ctx context.Context, name string) (Loaded, error) {
	if err := s.open(); err != nil {
		return Loaded{}, err
	}
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	snap, err := s.Catalog(ctx)
	if err != nil {
		return Loaded{}, err
	}
	e, err := resolve(snap, st.p.Tier, name)
	if err != nil {
		return Loaded{}, err
	}
	i := slices.IndexFunc(st.skills, func(l *loaded) bool { return l.key == e.Key })
	if i >= 0 && (st.skills[i].digest == e.Digest || !st.skills[i].pinned) {
		return st.skills[i].public(), nil
	}
	var next []*loaded
	var l *loaded
	if i >= 0 {
		// Loaded again while a newer version is registered: the session
		// moves to it, at the same mount.
		if l, err = s.m.mount(ctx, st.p, e, st.skills[i].mount, time.Time{}); err != nil {
			return Loaded{}, err
		}
		next = slices.Clone(st.skills)
		next[i] = l
	} else {
		mount, err := chooseMount(st.skills, e.Name, e.Category)
		if err != nil {
			return Loaded{}, err
		}
		if l, err = s.m.mount(ctx, st.p, e, mount, time.Time{}); err != nil {
			return Loaded{}, err
		}
		next = append(slices.Clone(st.skills), l)
	}
	if err := st.fs.SetSkills(skillMounts(next)); err != nil {
		return Loaded{}, fmt.Errorf("session: mount %s at %s/%s: %w", e.Key, vfs.SkillsPath, l.mount, err)
	}
	if err := s.m.persist(ctx, st, next); err != nil {
		_ = st.fs.SetSkills(skillMounts(st.skills))
		return Loaded{}, err
	}
	st.skills = next
	s.m.log.InfoContext(ctx, "skill loaded", "session", st.id, "principal", st.p.String(), "skill", l.key, "mount", l.mount, "digest", l.digest)
	return l.public(), nil
}

// Unload removes a loaded skill from the session; its /skills directory
// disappears (and /skills itself when it was the last). name is the
// skill's identity, its bare name when only one loaded skill has it, its
// mount name, or its mount path ("/skills/contratos--compraventa").
//
// Errors: [ErrNotLoaded], [ErrClosed], storage errors.
func (s *Session) Unload(ctx context.Context, name string) (Loaded, error) {
	if err := s.open(); err != nil {
		return Loaded{}, err
	}
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	i := findLoaded(st.skills, name)
	if i < 0 {
		return Loaded{}, fmt.Errorf("%w: %q", ErrNotLoaded, name)
	}
	l := st.skills[i]
	next := slices.Delete(slices.Clone(st.skills), i, i+1)
	if err := st.fs.SetSkills(skillMounts(next)); err != nil {
		return Loaded{}, fmt.Errorf("session: unmount %s: %w", l.key, err)
	}
	if err := s.m.persist(ctx, st, next); err != nil {
		_ = st.fs.SetSkills(skillMounts(st.skills))
		return Loaded{}, err
	}
	st.skills = next
	s.m.log.InfoContext(ctx, "skill unloaded", "session", st.id, "principal", st.p.String(), "skill", l.key)
	return l.public(), nil
}

// resolve finds the skill a caller means among those available to tier:
// an exact identity, else a bare name that exactly one available skill
// has. Only available skills are considered, so the errors reveal nothing
// about the others.
func resolve(snap *registry.Snapshot, tier skill.AgentTier, name string) (registry.Brief, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > maxSkillArg || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return registry.Brief{}, fmt.Errorf("%w: %q", ErrSkillNotFound, name)
	}
	if e, ok := snap.Lookup(tier, name); ok {
		return e, nil
	}
	byName := snap.Named(tier, name)
	switch len(byName) {
	case 0:
		return registry.Brief{}, fmt.Errorf("%w: %q", ErrSkillNotFound, name)
	case 1:
		return byName[0], nil
	}
	keys := make([]string, len(byName))
	for i, e := range byName {
		keys[i] = e.Key
	}
	return registry.Brief{}, fmt.Errorf("%w: %q is %s; name one of them with its category", ErrAmbiguous, name, strings.Join(keys, ", "))
}

// chooseMount applies the mount-name rule: the skill's name when no loaded
// skill is mounted there, else "<category>--<name>" (a multi-level
// category's slashes also become "--"). A valid skill name never contains
// "--", so the second form cannot be another skill's first form; when it is
// taken anyway (lenient names may contain "--", uncategorised skills have
// no second form) the load is refused with ErrMountInUse rather than
// guessed.
func chooseMount(skills []*loaded, name, category string) (string, error) {
	taken := func(m string) bool {
		return slices.ContainsFunc(skills, func(l *loaded) bool { return l.mount == m })
	}
	if !taken(name) {
		return name, nil
	}
	if category != "" {
		alt := strings.ReplaceAll(category, "/", "--") + "--" + name
		if !taken(alt) {
			return alt, nil
		}
		return "", fmt.Errorf("%w: %s/%s and %s/%s are both taken; unload one of those skills first", ErrMountInUse, vfs.SkillsPath, name, vfs.SkillsPath, alt)
	}
	return "", fmt.Errorf("%w: %s/%s is taken; unload that skill first", ErrMountInUse, vfs.SkillsPath, name)
}

// findLoaded returns the index of the loaded skill name designates, or -1.
func findLoaded(skills []*loaded, name string) int {
	name = strings.TrimSpace(name)
	mount := strings.TrimPrefix(strings.TrimSuffix(name, "/"), vfs.SkillsPath+"/")
	for i, l := range skills {
		if l.key == name || l.mount == mount {
			return i
		}
	}
	found := -1
	for i, l := range skills {
		if l.name == name {
			if found >= 0 {
				return -1 // ambiguous among loaded skills: name it fully
			}
			found = i
		}
	}
	return found
}

// skillTier converts a stored tier.
func skillTier(s string) skill.AgentTier { return skill.AgentTier(s) }
