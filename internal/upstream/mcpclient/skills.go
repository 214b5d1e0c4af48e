package mcpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// SkillsExtension is the MCP Skills extension's name in a server's
// capabilities (SEP-2640).
const SkillsExtension = "io.modelcontextprotocol/skills"

// Bounds on what a server publishes through the Skills extension, beside
// [Limits]: the extension's own per-skill limits, which every host must
// accept and no server should exceed.
const (
	// MaxSkillFiles bounds the files of one published skill, SKILL.md
	// included.
	MaxSkillFiles = 512
	// MaxSkillBytes bounds the sum of one published skill's file sizes
	// (16 MiB).
	MaxSkillBytes = 16 << 20
	// maxSkillURIBytes bounds one URI a server lists.
	maxSkillURIBytes = 4096
)

// PublishedSkills is what one server publishes through the Skills
// extension, as fetched at introspection: every skills/list entry exactly
// as received, and, for each entry that lists its files, the bytes of each
// file as resources/read returned them. Nothing here is verified: the
// caller checks entries, sizes, digests and frontmatter (package
// mcpskills) before trusting any of it.
type PublishedSkills struct {
	// Settings is the extension's declaration in the server's
	// capabilities ({} or {"directoryRead": true}).
	Settings json.RawMessage
	// Entries are the skills/list entries in server order.
	Entries []PublishedEntry
	// Error is set when the listing failed or broke a limit; Entries
	// then holds what was listed before.
	Error string
}

// PublishedEntry is one skills/list entry and the files it lists.
type PublishedEntry struct {
	// Raw is the entry as received.
	Raw json.RawMessage
	// Files are the listed files, read in listing order; empty when the
	// entry lists none ("dynamic") or Error is set.
	Files []PublishedFile
	// Error says why the files were not read (a malformed entry, a URI
	// outside the skill, over the extension's limits).
	Error string
}

// PublishedFile is one file of an entry as resources/read returned it.
type PublishedFile struct {
	URI string
	// Content is the file's bytes (text as UTF-8, or a blob decoded);
	// nil when Error is set.
	Content []byte
	Error   string
}

// SkillsDeclared reports whether the server declared the Skills
// extension in initialize.
func (r *ServerReport) SkillsDeclared() bool { return r.Skills != nil }

// fetchSkills lists the skills the server publishes and reads their files,
// within l: at most MaxPages pages of skills/list, MaxSkills entries, each
// skill's files within the extension's limits, all within ListTimeout and
// MaxListBytes of listing. It never fails: what went wrong is recorded.
func (u *upstream) fetchSkills(ctx context.Context) *PublishedSkills {
	if u.skills == nil {
		return nil
	}
	l := u.o.limits
	out := &PublishedSkills{Settings: u.skills, Entries: []PublishedEntry{}}
	lctx, cancel := context.WithTimeoutCause(ctx, l.ListTimeout, errPhaseTimeout)
	defer cancel()
	var (
		cursor string
		seen   = map[string]bool{}
		uris   = map[string]bool{}
		total  int
	)
	for page := 1; ; page++ {
		if page > l.MaxPages {
			out.Error = fmt.Sprintf("skills/list returns more than the limit of %d pages", l.MaxPages)
			return out
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := u.rawCall(lctx, "skills/list", params, l.ListTimeout)
		if err != nil {
			out.Error = u.scrub.err(err).Error()
			return out
		}
		total += len(raw)
		if total > l.MaxListBytes {
			out.Error = fmt.Sprintf("skills/list pages exceeded %d bytes in total", l.MaxListBytes)
			return out
		}
		entries, next, err := parseSkillsPage(raw)
		if err != nil {
			out.Error = fmt.Sprintf("skills/list page %d: %v", page, err)
			return out
		}
		for _, e := range entries {
			if len(out.Entries) >= l.MaxSkills {
				out.Error = fmt.Sprintf("the server publishes more than the limit of %d skills", l.MaxSkills)
				return out
			}
			pe := PublishedEntry{Raw: e}
			uri, files, err := entryFiles(e)
			switch {
			case err != nil:
				pe.Error = err.Error()
			case uris[uri]:
				pe.Error = fmt.Sprintf("skill %s is listed twice", strictjson.Quote(uri, 256))
			default:
				uris[uri] = true
				pe.Files = u.readFiles(lctx, files)
			}
			out.Entries = append(out.Entries, pe)
		}
		if next == "" {
			return out
		}
		if seen[next] || next == cursor {
			out.Error = fmt.Sprintf("skills/list page %d repeats cursor %s", page, strictjson.Quote(next, 128))
			return out
		}
		seen[next] = true
		cursor = next
	}
}

// readFiles reads each file with resources/read.
func (u *upstream) readFiles(ctx context.Context, uris []string) []PublishedFile {
	out := make([]PublishedFile, 0, len(uris))
	for _, uri := range uris {
		f := PublishedFile{URI: uri}
		content, err := u.readResource(ctx, uri)
		if err != nil {
			f.Error = u.scrub.err(err).Error()
		} else {
			f.Content = content
		}
		out = append(out, f)
	}
	return out
}

// readResource reads one resource over the raw path and returns its bytes.
func (u *upstream) readResource(ctx context.Context, uri string) ([]byte, error) {
	raw, err := u.rawCall(ctx, "resources/read", map[string]string{"uri": uri}, u.o.limits.CallTimeout)
	if err != nil {
		return nil, err
	}
	b, err := ResourceBytes(raw, uri)
	if err != nil {
		return nil, &ServerError{ServerID: u.id, Phase: "resources/read", Err: fmt.Errorf("%w: %w", ErrMalformedResponse, err)}
	}
	return b, nil
}

// ResourceBytes returns the bytes of a resources/read result for uri: its
// one content item for uri, text as UTF-8 or a blob decoded from base64.
// Any other shape (several contents, another URI, both or neither of text
// and blob) is an error.
func ResourceBytes(result json.RawMessage, uri string) ([]byte, error) {
	var r struct {
		Contents []struct {
			URI  string  `json:"uri"`
			Text *string `json:"text"`
			Blob *string `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("resources/read of %s: %w", strictjson.Quote(uri, 256), err)
	}
	if len(r.Contents) != 1 {
		return nil, fmt.Errorf("resources/read of %s returned %d contents; want 1", strictjson.Quote(uri, 256), len(r.Contents))
	}
	c := r.Contents[0]
	switch {
	case c.URI != uri:
		return nil, fmt.Errorf("resources/read of %s returned the content of %s", strictjson.Quote(uri, 256), strictjson.Quote(c.URI, 256))
	case c.Text != nil && c.Blob == nil:
		return []byte(*c.Text), nil
	case c.Blob != nil && c.Text == nil:
		b, err := base64.StdEncoding.DecodeString(*c.Blob)
		if err != nil {
			return nil, fmt.Errorf("resources/read of %s: blob is not base64: %w", strictjson.Quote(uri, 256), err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("resources/read of %s: the content has both or neither of text and blob", strictjson.Quote(uri, 256))
}

// parseSkillsPage splits a skills/list result into its raw entries and the
// next cursor.
func parseSkillsPage(raw json.RawMessage) (entries []json.RawMessage, next string, err error) {
	return parseListPage(raw, "skills")
}

// entryFiles reads what fetching needs of an entry, within the extension's
// limits: its SKILL.md URI and the URIs of its files (none for "dynamic").
// Every file must be SKILL.md or lie under the skill's root, be listed once,
// and the entry must list SKILL.md itself. The full checks are the caller's.
func entryFiles(raw json.RawMessage) (string, []string, error) {
	var e struct {
		URI       string          `json:"uri"`
		Resources json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", nil, fmt.Errorf("the entry: %w", err)
	}
	if e.URI == "" || len(e.URI) > maxSkillURIBytes || !utf8.ValidString(e.URI) {
		return "", nil, errors.New("the entry's uri is missing, not UTF-8 or longer than 4096 bytes")
	}
	root, ok := strings.CutSuffix(e.URI, "/SKILL.md")
	if !ok || root == "" {
		return "", nil, fmt.Errorf("the entry's uri %s does not name a SKILL.md", strictjson.Quote(e.URI, 256))
	}
	if string(bytes.TrimSpace(e.Resources)) == `"dynamic"` {
		return e.URI, nil, nil
	}
	var rs []struct {
		URI  string `json:"uri"`
		Size int64  `json:"size"`
	}
	if err := json.Unmarshal(e.Resources, &rs); err != nil {
		return "", nil, fmt.Errorf("skill %s: resources must be an array of files or \"dynamic\"", strictjson.Quote(e.URI, 256))
	}
	if len(rs) > MaxSkillFiles {
		return "", nil, fmt.Errorf("skill %s lists %d files, over the extension's limit of %d", strictjson.Quote(e.URI, 256), len(rs), MaxSkillFiles)
	}
	var sum int64
	seen := map[string]bool{}
	uris := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.Size < 0 {
			return "", nil, fmt.Errorf("skill %s: file %s has a negative size", strictjson.Quote(e.URI, 256), strictjson.Quote(r.URI, 256))
		}
		if sum += min(r.Size, MaxSkillBytes+1); sum > MaxSkillBytes {
			return "", nil, fmt.Errorf("skill %s: its files total more than the extension's limit of %d bytes (16 MiB)", strictjson.Quote(e.URI, 256), MaxSkillBytes)
		}
		if r.URI != e.URI && (!strings.HasPrefix(r.URI, root+"/") || len(r.URI) > maxSkillURIBytes) {
			return "", nil, fmt.Errorf("skill %s lists %s, which is not a file of the skill", strictjson.Quote(e.URI, 256), strictjson.Quote(r.URI, 256))
		}
		if seen[r.URI] {
			return "", nil, fmt.Errorf("skill %s lists %s twice", strictjson.Quote(e.URI, 256), strictjson.Quote(r.URI, 256))
		}
		seen[r.URI] = true
		uris = append(uris, r.URI)
	}
	if !seen[e.URI] {
		return "", nil, fmt.Errorf("skill %s does not list its SKILL.md among its resources", strictjson.Quote(e.URI, 256))
	}
	return e.URI, uris, nil
}

// ReadResource reads one resource of the server with resources/read over
// the raw path and returns its bytes (see [ResourceBytes]), within
// Limits.CallTimeout, over stdio or streamable HTTP. It fails with
// [ErrClosed] after Close, and otherwise as a server call fails. The bytes
// are the server's, unverified.
func (c *Conn) ReadResource(ctx context.Context, uri string) ([]byte, error) {
	if err := c.open(); err != nil {
		return nil, err
	}
	return c.u.readResource(ctx, uri)
}

// GetSkill asks the server for the current entry of the skill whose
// SKILL.md is at uri (skills/get) and returns the entry object as
// received, unverified, within Limits.CallTimeout. It fails as
// [Conn.ReadResource] does.
func (c *Conn) GetSkill(ctx context.Context, uri string) (json.RawMessage, error) {
	if err := c.open(); err != nil {
		return nil, err
	}
	raw, err := c.u.rawCall(ctx, "skills/get", map[string]string{"uri": uri}, c.limits.CallTimeout)
	if err != nil {
		return nil, err
	}
	var r struct {
		Skill json.RawMessage `json:"skill"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Skill) == 0 {
		return nil, &ServerError{ServerID: c.u.id, Phase: "skills/get", Err: fmt.Errorf("%w: the result has no skill object", ErrMalformedResponse)}
	}
	return r.Skill, nil
}

// open returns ErrClosed once the connection is closed.
func (c *Conn) open() error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return &ServerError{ServerID: c.u.id, Phase: "resources/read", Err: ErrClosed}
	}
	return nil
}

// ReadResource reads uri from t's server for who, over the pool's
// connection (dialled if needed; see [Pool.Conn] and [Conn.ReadResource]).
// The bytes are the server's, unverified.
func (p *Pool) ReadResource(ctx context.Context, who capability.Principal, t Target, uri string) ([]byte, error) {
	c, err := p.Conn(ctx, who, t)
	if err != nil {
		return nil, err
	}
	return c.ReadResource(ctx, uri)
}

// GetSkill asks t's server for who for the current entry of the skill
// whose SKILL.md is at uri (see [Conn.GetSkill]), unverified.
func (p *Pool) GetSkill(ctx context.Context, who capability.Principal, t Target, uri string) (json.RawMessage, error) {
	c, err := p.Conn(ctx, who, t)
	if err != nil {
		return nil, err
	}
	return c.GetSkill(ctx, uri)
}
