package mcpskills

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skillsext"
)

// publishedCursor starts what a skills/list cursor continues after in
// the relayed skills (a NUL, which no registry identity holds, then the
// path of the last one listed).
const publishedCursor = "\x00published:"

// isPublishedPath reports whether a skill path is one of a relayed skill.
func isPublishedPath(p string) bool { return strings.HasPrefix(p, skillsext.PublishedPrefix) }

// publishedEntries returns the published skills p may see, or nil.
func (s *Server) publishedEntries(ctx context.Context, p capability.Principal) []skillsext.PublishedSkill {
	if s.opts.Published == nil {
		return nil
	}
	return s.opts.Published.PublishedSkills(ctx, p)
}

// publishedPage answers a skills/list page of published skills after the
// path after ("": from the first).
func (s *Server) publishedPage(ctx context.Context, p capability.Principal, after string) (json.RawMessage, error) {
	all := s.publishedEntries(ctx, p)
	i, _ := slices.BinarySearchFunc(all, after, func(e skillsext.PublishedSkill, t string) int { return strings.Compare(e.Path, t) })
	if i < len(all) && all[i].Path == after {
		i++
	}
	out := listResult{ResultType: "complete", Skills: []json.RawMessage{}, TTLMs: s.ttl, CacheScope: CacheScope}
	for ; i < len(all) && len(out.Skills) < PageSize; i++ {
		b, err := json.Marshal(all[i].Entry)
		if err != nil {
			return nil, internalError("skills/list: %v", err)
		}
		out.Skills = append(out.Skills, b)
	}
	if i < len(all) {
		out.NextCursor = skillsext.EncodeCursor(publishedCursor + all[i-1].Path)
	}
	return marshal(out)
}

// findPublished returns the published skill at path p may see.
func (s *Server) findPublished(ctx context.Context, p capability.Principal, path string) (skillsext.PublishedSkill, bool) {
	all := s.publishedEntries(ctx, p)
	i, ok := slices.BinarySearchFunc(all, path, func(e skillsext.PublishedSkill, t string) int { return strings.Compare(e.Path, t) })
	if !ok {
		return skillsext.PublishedSkill{}, false
	}
	return all[i], true
}

// locatePublished finds the published skill p may see whose root is a
// prefix of uri, and the file path under it.
func (s *Server) locatePublished(ctx context.Context, p capability.Principal, u skillsext.URI) (skillsext.PublishedSkill, string, bool) {
	for i := min(len(u.Segments), maxSkillPathSegments); i >= 1; i-- {
		if ps, ok := s.findPublished(ctx, p, strings.Join(u.Segments[:i], "/")); ok {
			return ps, strings.Join(u.Segments[i:], "/"), true
		}
	}
	return skillsext.PublishedSkill{}, "", false
}

// readPublished answers resources/read of a relayed skill's file, with
// the skill's origin.
func (s *Server) readPublished(ctx context.Context, p capability.Principal, uri string, u skillsext.URI) ([]byte, skillsext.Origin, error) {
	ps, file, ok := s.locatePublished(ctx, p, u)
	if !ok || file == "" {
		return nil, skillsext.Origin{}, invalidParams("No skill file is served at %s", uri)
	}
	listed := ps.Entry.Dynamic
	if !listed {
		_, listed = ps.Entry.Find(uri)
	}
	// An unlisted file is refused by the relay (which audits it) without
	// asking the server.
	content, err := s.opts.Published.ReadPublished(ctx, p, ps.Path, file)
	switch {
	case errors.Is(err, skillsext.ErrNotServed) && !listed:
		return nil, skillsext.Origin{}, invalidParams("No skill file is served at %s: the approved entry of %s does not list it", uri, ps.Entry.URI)
	case err == nil && !listed:
		return nil, skillsext.Origin{}, internalError("the relay served %s, which the approved entry of %s does not list", uri, ps.Entry.URI)
	case errors.Is(err, skillsext.ErrNotServed):
		return nil, skillsext.Origin{}, invalidParams("No skill file is served at %s", uri)
	case errors.Is(err, skillsext.ErrVerify):
		why := strings.TrimPrefix(err.Error(), skillsext.ErrVerify.Error()+": ")
		return nil, skillsext.Origin{}, internalError("%s failed verification against its approved entry, and its skill is blocked until an operator re-approves it: %s", uri, why)
	case err != nil:
		return nil, skillsext.Origin{}, internalError("reading %s from its server failed: %v", uri, err)
	}
	return content, ps.Origin, nil
}

// readDirPublished answers resources/directory/read of a relayed skill's
// directory from its approved entry (the held entry is authoritative for
// what may be read).
func (s *Server) readDirPublished(ctx context.Context, p capability.Principal, uri string, u skillsext.URI) (json.RawMessage, error) {
	ps, rest, ok := s.locatePublished(ctx, p, u)
	if !ok || ps.Entry.Dynamic {
		return nil, invalidParams("No directory is served at %s", uri)
	}
	root := skillsext.Scheme + "://" + ps.Path + "/"
	prefix := ""
	if rest != "" {
		prefix = rest + "/"
	}
	out := dirResult{ResultType: "complete", Resources: []dirResource{}}
	seen := map[string]bool{}
	for _, r := range ps.Entry.Resources {
		rel := strings.TrimPrefix(r.URI, root)
		if rel == rest {
			return nil, invalidParams("%s is not a directory resource", uri)
		}
		name, ok := strings.CutPrefix(rel, prefix)
		if !ok {
			continue
		}
		if dir, _, nested := strings.Cut(name, "/"); nested {
			if !seen[dir] {
				seen[dir] = true
				out.Resources = append(out.Resources, dirResource{URI: uri + "/" + dir, Name: dir, MIMEType: "inode/directory"})
			}
			continue
		}
		size := r.Size
		out.Resources = append(out.Resources, dirResource{URI: r.URI, Name: name, MIMEType: mimeType(rel), Size: &size})
	}
	if len(out.Resources) == 0 && rest != "" {
		return nil, invalidParams("No directory is served at %s", uri)
	}
	return marshal(out)
}
