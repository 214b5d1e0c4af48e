package mcpskills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// CacheScope is the cacheScope of every result: what a principal sees
// depends on its tier, so results are never to be shared across
// authorization contexts.
const CacheScope = "private"

// DefaultTTL is how long a client may treat a result as current.
const DefaultTTL = time.Minute

// PageSize is how many skills a skills/list page holds at most.
const PageSize = 100

// DefaultCacheBytes bounds the entry cache (see Options.CacheBytes).
const DefaultCacheBytes = 32 << 20

// Capability is the extension's declaration in server capabilities.
func Capability() map[string]any { return map[string]any{"directoryRead": true} }

// View is what the server reads of the registry: the catalog snapshot of
// a tenant (filtered here by the principal's tier; a tenant sees its own
// skill library and no other's) and a skill's files, mounted as loading it
// would mount them. *session.Manager implements it.
type View interface {
	Catalog(ctx context.Context, tenant string) (*registry.Snapshot, error)
	SkillFiles(ctx context.Context, tenant string, e registry.Brief) (store.Version, blob.Store, string, error)
}

// Options configures a [Server]. View is required.
type Options struct {
	View View
	// TTL is the ttlMs of results; 0 means DefaultTTL.
	TTL time.Duration
	// CacheBytes bounds the memory of the built entries kept (an entry
	// costs about twice its JSON); 0 means DefaultCacheBytes, which holds
	// the entries of some 10,000 typical skills. When it is full the cache
	// is emptied: a registry larger than it builds entries again on every
	// walk, from the store and each SKILL.md.
	CacheBytes int
	// Published, when set, adds the skills installed skills' MCP servers
	// publish (approved, relayed and verified by the capability runtime)
	// under skill://mcp~<install>/<server>/…, listed after the
	// registry's skills.
	Published skillsext.Published
}

// Server serves the extension over a registry. Entries are built from a
// skill's recorded version on first use and kept (bounded) by directory and
// tree digest, so they are shared by every principal that may see the
// skill; visibility is decided per request from the catalog snapshot. A
// Server is safe for concurrent use.
type Server struct {
	opts Options
	ttl  int

	mu         sync.Mutex
	cache      map[string]*built
	cacheBytes int
}

// NewServer returns a server over opts.
func NewServer(opts Options) (*Server, error) {
	if opts.View == nil {
		return nil, errors.New("mcpskills: Options.View is required")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	return &Server{opts: opts, ttl: int(opts.TTL / time.Millisecond), cache: map[string]*built{}}, nil
}

// built is a skill's entry as served, or why it is not served.
type built struct {
	key       string
	skillPath string
	entry     json.RawMessage // the Skill entry
	files     map[string]skill.File
	paths     []string // sorted
	refusal   error    // not served through the extension: why
}

// Error constructors: every error a client sees is a JSON-RPC error.
func invalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func internalError(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// noSkill is the answer for a skill URI that names no skill the principal
// may see: the same whether the skill is absent or hidden.
func noSkill(uri string) *jsonrpc.Error {
	return invalidParams("No skill is served at %s", uri)
}

// Handle answers one request of the extension's methods for principal p:
// params is the request's params (absent, null or an object). The result
// is the JSON-RPC result; the error is a *jsonrpc.Error (-32602 for bad
// params or what the principal may not see, -32603 for internal errors,
// -32601 for another method).
func (s *Server) Handle(ctx context.Context, p capability.Principal, method string, params json.RawMessage) (json.RawMessage, error) {
	var in struct {
		URI    string  `json:"uri"`
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &in); err != nil {
			return nil, invalidParams("Invalid params for %s: %v (params is an object: {\"uri\": …, \"cursor\": …})", method, err)
		}
	}
	cursor := ""
	if in.Cursor != nil {
		cursor = *in.Cursor
	}
	switch method {
	case skillsext.MethodList:
		return s.List(ctx, p, cursor)
	case skillsext.MethodGet:
		if in.URI == "" {
			return nil, invalidParams("Invalid params for skills/get: uri is required (the skill's SKILL.md URI, as skills/list lists it)")
		}
		return s.Get(ctx, p, in.URI)
	case skillsext.MethodReadDir:
		if in.URI == "" {
			return nil, invalidParams("Invalid params for resources/directory/read: uri is required (a skill directory, such as skill://<skill-path>)")
		}
		return s.ReadDir(ctx, p, in.URI, cursor)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
}

// listResult is skills/list's result, entries already encoded.
type listResult struct {
	ResultType string            `json:"resultType"`
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
	TTLMs      int               `json:"ttlMs"`
	CacheScope string            `json:"cacheScope"`
}

// List answers skills/list: one page of the skills p may see, by identity,
// at most PageSize, each entry whole; skills not served through the
// extension (see the package doc) are left out. A page costs its size
// (plus building entries not cached yet), not the registry's.
func (s *Server) List(ctx context.Context, p capability.Principal, cursor string) (json.RawMessage, error) {
	after := ""
	if cursor != "" {
		var err error
		if after, err = skillsext.DecodeCursor(cursor); err != nil {
			return nil, invalidParams("%s", err.Error())
		}
	}
	if rest, ok := strings.CutPrefix(after, publishedCursor); ok {
		return s.publishedPage(ctx, p, rest)
	}
	snap, err := s.opts.View.Catalog(ctx, p.Tenant)
	if err != nil {
		return nil, internalError("skills/list: %v", err)
	}
	page, err := snap.Page(registry.PageQuery{AgentTier: p.Tier, After: after, Limit: PageSize})
	if err != nil {
		return nil, internalError("skills/list: %v", err)
	}
	out := listResult{ResultType: "complete", Skills: make([]json.RawMessage, 0, len(page.Skills)), TTLMs: s.ttl, CacheScope: CacheScope}
	for _, e := range page.Skills {
		b, err := s.entry(ctx, p, e)
		if err != nil {
			return nil, err
		}
		if b.refusal == nil {
			out.Skills = append(out.Skills, b.entry)
		}
	}
	if page.NextCursor != "" && len(page.Skills) > 0 {
		out.NextCursor = skillsext.EncodeCursor(page.Skills[len(page.Skills)-1].Key)
	} else if len(s.publishedEntries(ctx, p)) > 0 {
		// The relayed skills follow, from a page of their own.
		out.NextCursor = skillsext.EncodeCursor(publishedCursor)
	}
	return marshal(out)
}

type getResult struct {
	ResultType string          `json:"resultType"`
	Skill      json.RawMessage `json:"skill"`
	TTLMs      int             `json:"ttlMs"`
	CacheScope string          `json:"cacheScope"`
}

// Get answers skills/get for a SKILL.md URI.
func (s *Server) Get(ctx context.Context, p capability.Principal, uri string) (json.RawMessage, error) {
	u, err := skillsext.ParseURI(uri)
	if err != nil {
		return nil, invalidParams("%s", err.Error())
	}
	sp, ok := u.SkillPath()
	if !ok {
		return nil, invalidParams("%s is not a skill's SKILL.md URI (skill://<skill-path>/SKILL.md)", uri)
	}
	if isPublishedPath(sp) {
		ps, ok := s.findPublished(ctx, p, sp)
		if !ok {
			return nil, noSkill(uri)
		}
		b, err := json.Marshal(ps.Entry)
		if err != nil {
			return nil, internalError("skills/get: %v", err)
		}
		return marshal(getResult{ResultType: "complete", Skill: b, TTLMs: s.ttl, CacheScope: CacheScope})
	}
	snap, err := s.opts.View.Catalog(ctx, p.Tenant)
	if err != nil {
		return nil, internalError("skills/get: %v", err)
	}
	e, ok := snap.Lookup(p.Tier, sp)
	if !ok || e.Key != sp {
		return nil, noSkill(uri)
	}
	b, err := s.entry(ctx, p, e)
	if err != nil {
		return nil, err
	}
	if b.refusal != nil {
		return nil, invalidParams("The skill at %s is not served through the MCP Skills extension: %v; load it with load_skill instead", uri, b.refusal)
	}
	return marshal(getResult{ResultType: "complete", Skill: b.entry, TTLMs: s.ttl, CacheScope: CacheScope})
}

// maxSkillPathSegments bounds the skill path locate tries.
const maxSkillPathSegments = 32

// locate finds the visible, served skill whose path is a prefix of u's
// segments (the longest first) and for which ok accepts the rest.
func (s *Server) locate(ctx context.Context, p capability.Principal, u skillsext.URI, ok func(b *built, rest string) bool) (*built, string, error) {
	snap, err := s.opts.View.Catalog(ctx, p.Tenant)
	if err != nil {
		return nil, "", internalError("%v", err)
	}
	// A skill path is an identity (category levels and a name): far
	// shorter than the URIs a client may send. A visible skill refused for
	// the extension's limits, when nothing else serves the URI, is named
	// with the limit it is over.
	var overLimit error
	for i := min(len(u.Segments), maxSkillPathSegments); i >= 1; i-- {
		key := strings.Join(u.Segments[:i], "/")
		e, found := snap.Lookup(p.Tier, key)
		if !found {
			continue
		}
		b, err := s.entry(ctx, p, e)
		if err != nil {
			return nil, "", err
		}
		if b.refusal != nil {
			if overLimit == nil && errors.Is(b.refusal, skillsext.ErrOverLimit) {
				overLimit = invalidParams("Nothing is served at %s: the skill %s is not served through the MCP Skills extension: %v; load it with load_skill instead", u.String(), key, b.refusal)
			}
			continue
		}
		rest := strings.Join(u.Segments[i:], "/")
		if ok(b, rest) {
			return b, rest, nil
		}
	}
	return nil, "", overLimit
}

// Read answers resources/read of a skill file: its exact bytes, checked
// against the entry's size and digest before they are served (text when
// they are UTF-8, base64 otherwise).
func (s *Server) Read(ctx context.Context, p capability.Principal, uri string) (*mcp.ReadResourceResult, error) {
	u, err := skillsext.ParseURI(uri)
	if err != nil {
		return nil, invalidParams("%s", err.Error())
	}
	var content []byte
	file := ""
	var meta mcp.Meta
	if isPublishedPath(u.Segments[0]) {
		var origin skillsext.Origin
		if content, origin, err = s.readPublished(ctx, p, uri, u); err != nil {
			return nil, err
		}
		file = u.Segments[len(u.Segments)-1]
		meta = mcp.Meta{skillsext.OriginMeta: origin}
	} else {
		b, rest, err := s.locate(ctx, p, u, func(b *built, rest string) bool { _, ok := b.files[rest]; return ok })
		if err != nil {
			return nil, err
		}
		if b == nil {
			return nil, invalidParams("No skill file is served at %s", uri)
		}
		f := b.files[rest]
		if content, err = s.readFile(ctx, p, b, f); err != nil {
			return nil, err
		}
		file = f.Path
	}
	rc := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(file), Meta: meta}
	if utf8.Valid(content) && len(content) > 0 {
		rc.Text = string(content)
	} else {
		rc.Blob = content
		if rc.Blob == nil {
			rc.Blob = []byte{}
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}, Cacheable: mcp.Cacheable{TTLMs: s.ttl, CacheScope: CacheScope}}, nil
}

// readFile reads one recorded file of b and checks it against the record.
func (s *Server) readFile(ctx context.Context, p capability.Principal, b *built, f skill.File) ([]byte, error) {
	snap, err := s.opts.View.Catalog(ctx, p.Tenant)
	if err != nil {
		return nil, internalError("%v", err)
	}
	e, ok := snap.Lookup(p.Tier, b.key)
	if !ok {
		return nil, noSkill(skillsext.Scheme + "://" + b.skillPath + "/" + skillsext.SkillFile)
	}
	_, st, prefix, err := s.opts.View.SkillFiles(ctx, p.Tenant, e)
	if err != nil {
		return nil, internalError("reading %s: %v", b.key, err)
	}
	content, err := readExact(ctx, st, prefix+f.Path, f.Size)
	if err == nil && skill.FileDigest(content) != f.Digest {
		err = errors.New("its digest no longer matches the one recorded")
	}
	if err != nil {
		return nil, internalError("skill file %s/%s changed on disk since the last scan (%v); run `skillgate scan`, then skills/get again", b.skillPath, f.Path, err)
	}
	return content, nil
}

// readExact reads exactly size bytes of key, failing when the object has
// another size.
func readExact(ctx context.Context, st blob.Store, key string, size int64) ([]byte, error) {
	rc, info, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if info.Size != size {
		return nil, fmt.Errorf("it is %d bytes, %d were recorded", info.Size, size)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// dirResource is one child in resources/directory/read.
type dirResource struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     *int64 `json:"size,omitempty"`
}

type dirResult struct {
	ResultType string        `json:"resultType"`
	Resources  []dirResource `json:"resources"`
}

// ReadDir answers resources/directory/read of a skill's directory or one
// of its subdirectories: its direct children, files with their metadata
// and subdirectories as inode/directory, from the skill's recorded files.
// A skill holds at most MaxResources files, so the result is one page.
func (s *Server) ReadDir(ctx context.Context, p capability.Principal, uri, cursor string) (json.RawMessage, error) {
	u, err := skillsext.ParseURI(uri)
	if err != nil {
		return nil, invalidParams("%s", err.Error())
	}
	if cursor != "" {
		return nil, invalidParams("Invalid cursor: resources/directory/read of a skill directory returns every child in one page and no cursor; omit it")
	}
	if isPublishedPath(u.Segments[0]) {
		return s.readDirPublished(ctx, p, uri, u)
	}
	isFile := false
	b, rest, err := s.locate(ctx, p, u, func(b *built, rest string) bool {
		if _, ok := b.files[rest]; ok {
			isFile = true
			return false
		}
		if rest == "" {
			return true
		}
		i, _ := slices.BinarySearch(b.paths, rest+"/")
		return i < len(b.paths) && strings.HasPrefix(b.paths[i], rest+"/")
	})
	if err != nil {
		return nil, err
	}
	if b == nil {
		if isFile {
			return nil, invalidParams("%s is not a directory resource", uri)
		}
		return nil, invalidParams("No directory is served at %s", uri)
	}
	prefix := ""
	if rest != "" {
		prefix = rest + "/"
	}
	out := dirResult{ResultType: "complete", Resources: []dirResource{}}
	seen := map[string]bool{}
	for _, fp := range b.paths {
		name, ok := strings.CutPrefix(fp, prefix)
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
		f := b.files[fp]
		size := f.Size
		out.Resources = append(out.Resources, dirResource{URI: uri + "/" + name, Name: name, MIMEType: mimeType(fp), Size: &size})
	}
	return marshal(out)
}

// entry returns the built entry of e, from the cache or built now.
func (s *Server) entry(ctx context.Context, p capability.Principal, e registry.Brief) (*built, error) {
	ck := e.Dir + "\x00" + e.Digest
	s.mu.Lock()
	b := s.cache[ck]
	s.mu.Unlock()
	if b != nil {
		return b, nil
	}
	b, err := s.build(ctx, p, e)
	if err != nil {
		return nil, err
	}
	size := b.size()
	s.mu.Lock()
	if _, ok := s.cache[ck]; !ok {
		if s.cacheBytes+size > s.opts.CacheBytes {
			clear(s.cache) // bounded: the next pages build again
			s.cacheBytes = 0
		}
		s.cache[ck] = b
		s.cacheBytes += size
	}
	s.mu.Unlock()
	return b, nil
}

// size estimates the memory a built entry holds.
func (b *built) size() int {
	n := 256 + len(b.key) + len(b.entry)
	for _, p := range b.paths {
		n += 2*len(p) + 128 // the path, its map entry and skill.File
	}
	return n
}

// build makes the entry of a skill from its recorded version.
func (s *Server) build(ctx context.Context, p capability.Principal, e registry.Brief) (*built, error) {
	v, st, prefix, err := s.opts.View.SkillFiles(ctx, p.Tenant, e)
	if err != nil {
		return nil, internalError("skill %s: %v", e.Key, err)
	}
	b := &built{key: e.Key, skillPath: e.Key}
	var files []skill.File
	if len(v.Files) > 0 {
		if err := json.Unmarshal(v.Files, &files); err != nil {
			return nil, internalError("skill %s: its recorded file list is unreadable: %v", e.Key, err)
		}
	}
	if r := refusal(v, files); r != nil {
		b.refusal = r
		return b, nil
	}
	resources := make([]skillsext.Resource, len(files))
	for i, f := range files {
		resources[i] = skillsext.Resource{Size: f.Size}
	}
	if err := skillsext.CheckLimits(resources); err != nil {
		b.refusal = err
		return b, nil
	}
	if slices.ContainsFunc(files, func(f skill.File) bool { return f.Digest == "" }) {
		if err := digestLegacy(ctx, st, prefix, v, files); err != nil {
			return nil, internalError("skill %s: %v; run `skillgate scan`", e.Key, err)
		}
	}
	b.files = make(map[string]skill.File, len(files))
	var main skill.File
	for i, f := range files {
		resources[i].URI = skillsext.Scheme + "://" + e.Key + "/" + f.Path
		resources[i].Digest = f.Digest
		b.files[f.Path] = f
		b.paths = append(b.paths, f.Path)
		if f.Path == skillsext.SkillFile {
			main = f
		}
	}
	slices.Sort(b.paths)
	content, err := readExact(ctx, st, prefix+skillsext.SkillFile, main.Size)
	if err == nil && skill.FileDigest(content) != main.Digest {
		err = errors.New("its digest no longer matches the one recorded")
	}
	if err != nil {
		return nil, internalError("skill %s: SKILL.md changed on disk since the last scan (%v); run `skillgate scan`", e.Key, err)
	}
	fm, err := skillsext.FrontmatterJSON(content)
	if err != nil {
		b.refusal = fmt.Errorf("its frontmatter cannot be rendered as JSON: %w", err)
		return b, nil
	}
	b.entry, err = json.Marshal(skillsext.Entry{URI: skillsext.Scheme + "://" + e.Key + "/" + skillsext.SkillFile, Frontmatter: fm, Resources: resources})
	if err != nil {
		return nil, internalError("skill %s: %v", e.Key, err)
	}
	return b, nil
}

// refusal says why a version is not served through the extension (nil
// when it is): its main file is not SKILL.md, its name is not a valid
// Agent Skills name or not the last segment of its identity, or its
// identity or a file path cannot be written in a URI unencoded.
func refusal(v store.Version, files []skill.File) error {
	if base := path.Base(filepath.ToSlash(v.File)); base != skillsext.SkillFile {
		return fmt.Errorf("its main file is %s, and skill URIs name SKILL.md", base)
	}
	if isPublishedPath(v.Key) {
		return fmt.Errorf("its identity starts with %s, which skillgate keeps for skills relayed from installed skills' MCP servers", skillsext.PublishedPrefix)
	}
	if !skillsext.ValidName(v.Name) {
		return fmt.Errorf("its name %q is not a valid Agent Skills name (1-64 lowercase letters, digits and single hyphens)", v.Name)
	}
	if v.Key != v.Name && !strings.HasSuffix(v.Key, "/"+v.Name) {
		return fmt.Errorf("its identity %q does not end with its name %q", v.Key, v.Name)
	}
	if n := strings.Count(v.Key, "/") + 1; n > maxSkillPathSegments {
		return fmt.Errorf("its identity has %d segments, more than the %d a skill path may have", n, maxSkillPathSegments)
	}
	if _, err := skillsext.BuildURI(v.Key, ""); err != nil {
		return fmt.Errorf("its identity cannot be a skill path: %w", err)
	}
	hasMain := false
	for _, f := range files {
		if _, err := skillsext.BuildURI(v.Key, f.Path); err != nil {
			return fmt.Errorf("its file %q cannot be written in a skill URI without percent-encoding", f.Path)
		}
		hasMain = hasMain || f.Path == skillsext.SkillFile
	}
	if !hasMain {
		return errors.New("its recorded files do not include SKILL.md")
	}
	return nil
}

// digestLegacy computes the per-file digests of a version recorded
// without them, reading every file once, and accepts them only when the
// tree digest they make is the recorded one.
func digestLegacy(ctx context.Context, st blob.Store, prefix string, v store.Version, files []skill.File) error {
	all := make(map[string][]byte, len(files))
	for i := range files {
		content, err := readExact(ctx, st, prefix+files[i].Path, files[i].Size)
		if err != nil {
			return fmt.Errorf("%s changed on disk since the last scan: %w", files[i].Path, err)
		}
		all[files[i].Path] = content
		files[i].Digest = skill.FileDigest(content)
	}
	if d := skill.DigestBytes(all); d != v.Digest {
		return fmt.Errorf("its files changed on disk since the last scan (tree digest %s, %s was recorded)", d, v.Digest)
	}
	return nil
}

func marshal(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, internalError("%v", err)
	}
	return b, nil
}
