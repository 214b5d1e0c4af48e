package mcpskills

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// PublishedPrefix starts the skill path of every skill relayed from an
// installed skill's MCP server (mcp~<install>/<server>/<upstream skill
// path>): skills/list lists them after the registry's skills, and a
// registry skill whose identity starts with it is not served through the
// extension, so that neither shadows the other.
const PublishedPrefix = "mcp~"

// ErrNotServed means no published skill, or no file of one, is served at
// a path for the principal: it does not exist, the principal may not see
// it, or the approved entry does not list the file. A client is told the
// same for each.
var ErrNotServed = errors.New("not served")

// PublishedSkill is a skill an installed skill's MCP server publishes,
// approved, as skillgate serves it onwards: its skill path and its entry,
// the URIs under skill://<Path>/ and the frontmatter, digests and sizes
// those approved.
type PublishedSkill struct {
	Path  string
	Entry Entry
	// Origin says where it comes from: the install, its server (mcp.json
	// id) and the upstream SKILL.md URI. Every file read carries it in
	// _meta under [OriginMeta], so that the content is tagged with its
	// origin where it enters a model's context.
	Origin Origin
}

// Origin is where a relayed skill comes from.
type Origin struct {
	Install string `json:"install"`
	Server  string `json:"server"`
	URI     string `json:"uri"`
}

// OriginMeta is the _meta key of the origin of a relayed skill's file in
// resources/read (skillgate's own prefix: the extension reserves
// io.modelcontextprotocol.skills/ for itself).
const OriginMeta = "io.skillgate/origin"

// Published is the skills installed skills' MCP servers publish, as the
// capability runtime relays them (*broker.Broker implements it). Both
// methods see only what principal p may: the approved, unblocked skills of
// enabled installs its tier may invoke.
type Published interface {
	// PublishedSkills returns the skills p may see, sorted by Path.
	PublishedSkills(ctx context.Context, p capability.Principal) []PublishedSkill
	// ReadPublished reads file (relative to the skill's root) of the
	// skill at path from its server and returns the bytes only when they
	// are those approved: the same size and digest, and for SKILL.md the
	// same frontmatter. Errors wrap ErrNotServed (nothing is served
	// there for p) or ErrVerify (the server sent something else: the
	// skill is blocked until re-approved); any other error is the
	// server's failure.
	ReadPublished(ctx context.Context, p capability.Principal, path, file string) ([]byte, error)
}

// publishedCursor starts what a skills/list cursor continues after in
// the relayed skills (a NUL, which no registry identity holds, then the
// path of the last one listed).
const publishedCursor = "\x00published:"

// isPublishedPath reports whether a skill path is one of a relayed skill.
func isPublishedPath(p string) bool { return strings.HasPrefix(p, PublishedPrefix) }

// publishedEntries returns the published skills p may see, or nil.
func (s *Server) publishedEntries(ctx context.Context, p capability.Principal) []PublishedSkill {
	if s.opts.Published == nil {
		return nil
	}
	return s.opts.Published.PublishedSkills(ctx, p)
}

// publishedPage answers a skills/list page of published skills after the
// path after ("": from the first).
func (s *Server) publishedPage(ctx context.Context, p capability.Principal, after string) (json.RawMessage, error) {
	all := s.publishedEntries(ctx, p)
	i, _ := slices.BinarySearchFunc(all, after, func(e PublishedSkill, t string) int { return strings.Compare(e.Path, t) })
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
		out.NextCursor = EncodeCursor(publishedCursor + all[i-1].Path)
	}
	return marshal(out)
}

// findPublished returns the published skill at path p may see.
func (s *Server) findPublished(ctx context.Context, p capability.Principal, path string) (PublishedSkill, bool) {
	all := s.publishedEntries(ctx, p)
	i, ok := slices.BinarySearchFunc(all, path, func(e PublishedSkill, t string) int { return strings.Compare(e.Path, t) })
	if !ok {
		return PublishedSkill{}, false
	}
	return all[i], true
}

// locatePublished finds the published skill p may see whose root is a
// prefix of uri, and the file path under it.
func (s *Server) locatePublished(ctx context.Context, p capability.Principal, u URI) (PublishedSkill, string, bool) {
	for i := min(len(u.Segments), maxSkillPathSegments); i >= 1; i-- {
		if ps, ok := s.findPublished(ctx, p, strings.Join(u.Segments[:i], "/")); ok {
			return ps, strings.Join(u.Segments[i:], "/"), true
		}
	}
	return PublishedSkill{}, "", false
}

// readPublished answers resources/read of a relayed skill's file, with
// the skill's origin.
func (s *Server) readPublished(ctx context.Context, p capability.Principal, uri string, u URI) ([]byte, Origin, error) {
	ps, file, ok := s.locatePublished(ctx, p, u)
	if !ok || file == "" {
		return nil, Origin{}, invalidParams("No skill file is served at %s", uri)
	}
	listed := ps.Entry.Dynamic
	if !listed {
		_, listed = ps.Entry.Find(uri)
	}
	// An unlisted file is refused by the relay (which audits it) without
	// asking the server.
	content, err := s.opts.Published.ReadPublished(ctx, p, ps.Path, file)
	switch {
	case errors.Is(err, ErrNotServed) && !listed:
		return nil, Origin{}, invalidParams("No skill file is served at %s: the approved entry of %s does not list it", uri, ps.Entry.URI)
	case err == nil && !listed:
		return nil, Origin{}, internalError("the relay served %s, which the approved entry of %s does not list", uri, ps.Entry.URI)
	case errors.Is(err, ErrNotServed):
		return nil, Origin{}, invalidParams("No skill file is served at %s", uri)
	case errors.Is(err, ErrVerify):
		why := strings.TrimPrefix(err.Error(), ErrVerify.Error()+": ")
		return nil, Origin{}, internalError("%s failed verification against its approved entry, and its skill is blocked until an operator re-approves it: %s", uri, why)
	case err != nil:
		return nil, Origin{}, internalError("reading %s from its server failed: %v", uri, err)
	}
	return content, ps.Origin, nil
}

// readDirPublished answers resources/directory/read of a relayed skill's
// directory from its approved entry (the held entry is authoritative for
// what may be read).
func (s *Server) readDirPublished(ctx context.Context, p capability.Principal, uri string, u URI) (json.RawMessage, error) {
	ps, rest, ok := s.locatePublished(ctx, p, u)
	if !ok || ps.Entry.Dynamic {
		return nil, invalidParams("No directory is served at %s", uri)
	}
	root := Scheme + "://" + ps.Path + "/"
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
