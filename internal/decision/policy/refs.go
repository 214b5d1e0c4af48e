package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
)

// ResolveCapability turns what an operator typed into a capability
// reference. The full form "skill:extensionId/capabilityId" is parsed
// strictly ([capability.ParseRef]). The short form "extensionId/
// capabilityId" is accepted only when exactly one capability record of the
// engine (the installed skills) has it; otherwise the error lists the
// candidates to choose from, or wraps [ErrNoSuchCapability] when there are
// none. It is for the CLI: a request from a program
// should name the skill.
func (e *Engine) ResolveCapability(s string) (capability.Ref, error) {
	if strings.Contains(s, ":") {
		return capability.ParseRef(s)
	}
	ext, c, ok := strings.Cut(s, "/")
	if !ok || ext == "" || c == "" {
		return capability.Ref{}, fmt.Errorf("%w: capability %q: %s", ErrInvalidCapability, s, capability.RefFormHelp)
	}
	var found []capability.Ref
	caps := e.snap.Load().caps
	for i := range caps {
		ce := &caps[i]
		if ce.ExtensionID == ext && ce.CapabilityID == c {
			found = append(found, ce.Ref())
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return capability.Ref{}, fmt.Errorf("%w: %s: %w; name the skill: %s", ErrInvalidCapability, s, ErrNoSuchCapability, capability.RefFormHelp)
	}
	return capability.Ref{}, fmt.Errorf("%w: %s is offered by %d skills (%s); name one of them", ErrInvalidCapability, s, len(found), refList(found))
}

// ResolveGrantCapability turns a grant's capability pattern as an operator
// typed it into the stored form. "*" (every capability of every skill) and
// patterns that name the skill ("notes:fs/*", "*:fs/write_file") are
// checked and kept. A short pattern without a skill ("fs/write_file",
// "fs/*") is accepted only when the capabilities it matches belong to
// exactly one installed skill, and is then bound to that skill; otherwise
// the error lists the skills and how to name them. Like
// [Engine.ResolveCapability] it is for the CLI.
func (e *Engine) ResolveGrantCapability(pattern string) (string, error) {
	if pattern == "*" || strings.Contains(pattern, ":") {
		return pattern, checkGrantCapability(pattern)
	}
	if ext, c, ok := strings.Cut(pattern, "/"); !ok || ext == "" || c == "" {
		return "", fmt.Errorf("%w: capability %q: %s", ErrInvalidGrant, pattern, grantFormHelp)
	}
	var skills []string
	caps := e.snap.Load().caps
	for i := range caps {
		ce := &caps[i]
		if constraint.MatchWildcard(pattern, ce.Ref().Short()) && !slices.Contains(skills, ce.SkillKey) {
			skills = append(skills, ce.SkillKey)
		}
	}
	slices.Sort(skills)
	switch len(skills) {
	case 1:
		return skills[0] + ":" + pattern, nil
	case 0:
		return "", fmt.Errorf("%w: no installed skill offers a capability matching %s; name the skill: %s", ErrInvalidGrant, pattern, grantFormHelp)
	}
	var cands []string
	for _, sk := range skills {
		cands = append(cands, sk+":"+pattern)
	}
	return "", fmt.Errorf("%w: %s matches capabilities of %d skills (%s); name one of them, or write *:%s to grant it for every skill", ErrInvalidGrant, pattern, len(skills), strings.Join(cands, ", "), pattern)
}

// checkOffered refuses a grant capability pattern that matches no
// capability of an installed skill (the engine's capability records): such
// a grant would be listed as active while no call could ever use it, and
// would silently start to cover a skill installed later under that name.
// The error wraps [ErrInvalidGrant] and [ErrNoSuchCapability] and names the
// closest capabilities offered (by edit distance, at most three) in a "did
// you mean" hint. [Engine.AddGrant] runs it, so the CLI, the REST API and
// the console refuse alike.
func (s *snapshot) checkOffered(pattern string) error {
	refs := make([]string, 0, len(s.caps))
	for i := range s.caps {
		ref := s.caps[i].ref
		if constraint.MatchWildcard(pattern, ref) {
			return nil
		}
		refs = append(refs, ref)
	}
	if len(refs) == 0 {
		return fmt.Errorf("%w: capability %s: %w; no installed skill offers any capability yet: install and approve one first (skillgate install)", ErrInvalidGrant, pattern, ErrNoSuchCapability)
	}
	return fmt.Errorf("%w: capability %s: %w; did you mean %s? (skillgate review SKILL lists what a skill offers)",
		ErrInvalidGrant, pattern, ErrNoSuchCapability, strings.Join(closest(pattern, refs, 3), ", "))
}

// closest returns at most n of candidates nearest to s: by edit distance,
// ties broken by name. A candidate that s is a prefix of counts as
// nearest.
func closest(s string, candidates []string, n int) []string {
	type scored struct {
		c string
		d int
	}
	sc := make([]scored, len(candidates))
	for i, c := range candidates {
		d := editDistance(s, c)
		if strings.HasPrefix(c, strings.TrimRight(s, "*")) {
			d = 0
		}
		sc[i] = scored{c, d}
	}
	slices.SortFunc(sc, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.c, b.c)
	})
	out := make([]string, 0, n)
	for _, x := range sc[:min(n, len(sc))] {
		out = append(out, x.c)
	}
	return out
}

// grantFormHelp is how grant capability errors say what to write.
const grantFormHelp = "write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything"

// checkGrantCapability checks a stored grant's capability pattern: "*", or
// "SKILL:REST" where SKILL is a non-empty pattern without ':' and REST is
// "*" or "EXT/CAP" with both sides non-empty; '*' matches any run of
// characters in each part.
func checkGrantCapability(p string) error {
	if p == "*" {
		return nil
	}
	sk, rest, ok := strings.Cut(p, ":")
	if !ok {
		return fmt.Errorf("%w: capability %q does not name its skill: %s", ErrInvalidGrant, p, grantFormHelp)
	}
	if rest == "*" && sk != "" {
		return nil
	}
	ext, c, ok := strings.Cut(rest, "/")
	if sk == "" || !ok || ext == "" || c == "" || strings.Contains(ext, ":") {
		return fmt.Errorf("%w: capability %q: %s", ErrInvalidGrant, p, grantFormHelp)
	}
	return nil
}

func refList(refs []capability.Ref) string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.String()
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// checkEntityRefs reports a policy text's Capability and Extension entity
// literals that are not in skillgate's form: Capability::"skill:ext/cap"
// and Extension::"skill:ext". A literal in the older form without the
// skill (Capability::"fs/write_file", Extension::"fs") would match no
// entity, so a forbid written with it would silently stop applying; it is
// an error naming the fix instead. text is the policy as Cedar marshals it,
// where a quote inside a string literal is escaped, so `::"` only occurs
// after an entity type.
func checkEntityRefs(text string) error {
	for _, typ := range []string{string(TypeCapability), string(TypeExtension)} {
		rest := text
		for {
			i := strings.Index(rest, typ+`::"`)
			if i < 0 {
				break
			}
			prev := byte(0)
			if i > 0 {
				prev = rest[i-1]
			}
			rest = rest[i+len(typ)+2:]
			if prev == '_' || prev >= 'a' && prev <= 'z' || prev >= 'A' && prev <= 'Z' || prev >= '0' && prev <= '9' {
				continue // another type whose name ends in typ
			}
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				break
			}
			rest = rest[len(q):]
			id, _ := strconv.Unquote(q)
			if typ == string(TypeCapability) {
				if _, err := capability.ParseRef(id); err != nil {
					return fmt.Errorf("Capability::%s: capability ids name their skill since skills may share server names; %s", q, capability.RefFormHelp)
				}
				continue
			}
			if sk, ext, ok := strings.Cut(id, ":"); !ok || sk == "" || ext == "" || strings.Contains(ext, "/") {
				return fmt.Errorf("Extension::%s: extension ids name their skill since skills may share server names; write it as skill:extensionId, like acme/notes:fs", q)
			}
		}
	}
	return nil
}
