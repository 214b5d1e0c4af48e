package skillsext

import (
	"context"
	"errors"

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
