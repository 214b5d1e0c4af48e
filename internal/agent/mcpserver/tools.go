package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/catalog"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/agent/vfs"
)

// Tool names, as deepagents' FilesystemMiddleware names the filesystem
// tools.
const (
	ToolSkillList   = "skill_list"
	ToolLoadSkill   = "load_skill"
	ToolUnloadSkill = "unload_skill"
	ToolLs          = "ls"
	ToolReadFile    = "read_file"
	ToolGrep        = "grep"
	ToolGlob        = "glob"
	ToolWriteFile   = "write_file"
	ToolEditFile    = "edit_file"
)

// Tool inputs. Fields without omitempty are required; unknown fields are
// refused (the inferred schemas set additionalProperties: false).
type (
	skillListIn struct {
		Query    string `json:"query,omitempty" jsonschema:"what you need, in your own words: the skills relevant to it, best first (an exact name first), each with its score"`
		Category string `json:"category,omitempty" jsonschema:"only skills of this category, e.g. escrituras"`
		Tier     int    `json:"tier,omitempty" jsonschema:"only skills of this skill tier: 1, 2 or 3"`
		Limit    int    `json:"limit,omitempty" jsonschema:"how many skills per page, 1 to 1000 (default 100)"`
		Cursor   string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page, to continue; omit for the first page"`
	}
	skillIn struct {
		Skill string `json:"skill" jsonschema:"the skill's category/name, e.g. escrituras/compraventa; a bare name works when only one category has it"`
	}
	lsIn struct {
		Path string `json:"path,omitempty" jsonschema:"absolute path of the directory to list (default /)"`
	}
	readIn struct {
		FilePath string `json:"file_path" jsonschema:"absolute path of the file, e.g. /skills/compraventa/SKILL.md"`
		Offset   int    `json:"offset,omitempty" jsonschema:"line to start from, 0-based (default 0)"`
		Limit    int    `json:"limit,omitempty" jsonschema:"maximum number of lines (default 2000)"`
	}
	grepIn struct {
		Pattern    string `json:"pattern" jsonschema:"text to search for, literally (not a regular expression)"`
		Path       string `json:"path,omitempty" jsonschema:"directory or file to search (default /: everything)"`
		Glob       string `json:"glob,omitempty" jsonschema:"only files whose name matches this glob, e.g. *.md or *.{md,txt}"`
		OutputMode string `json:"output_mode,omitempty" jsonschema:"files_with_matches (default), content, or count"`
	}
	globIn struct {
		Pattern string `json:"pattern" jsonschema:"glob pattern relative to path, e.g. **/*.md"`
		Path    string `json:"path,omitempty" jsonschema:"directory to search from (default /)"`
	}
	writeIn struct {
		FilePath string `json:"file_path" jsonschema:"absolute path of the new file, under /workspace"`
		Content  string `json:"content" jsonschema:"the file's content"`
	}
	editIn struct {
		FilePath   string `json:"file_path" jsonschema:"absolute path of the file to edit"`
		OldString  string `json:"old_string" jsonschema:"exact text to replace; must occur once unless replace_all"`
		NewString  string `json:"new_string" jsonschema:"replacement text"`
		ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence (default false)"`
	}
)

// Tool outputs (structured content).
type (
	skillListOut struct {
		Skills     []catalog.Item `json:"skills" jsonschema:"this page of the skills you may load, by category/name"`
		Total      int            `json:"total" jsonschema:"how many skills match the filters, on every page"`
		NextCursor string         `json:"next_cursor" jsonschema:"pass it as cursor to get the next page; empty on the last page"`
	}
	loadOut struct {
		Skill    string `json:"skill" jsonschema:"the skill's identity"`
		Name     string `json:"name"`
		Category string `json:"category,omitempty"`
		Mount    string `json:"mount" jsonschema:"the skill's directory in the filesystem"`
		Session  string `json:"session" jsonschema:"the session id, to resume this session later"`
	}
	unloadOut struct {
		Skill   string `json:"skill"`
		Mount   string `json:"mount" jsonschema:"the directory that was removed"`
		Session string `json:"session"`
	}
)

func ptr[T any](v T) *T { return &v }

// Annotation sets. Read-only tools say so; no tool reaches outside
// skillgate (openWorldHint false).
var (
	readOnly = func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	}
	additive = func(title string, idempotent bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(false), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
	}
	destructive = func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	}
)

// inputSchema infers T's schema and lets edit add what tags cannot say
// (bounds, enums).
func inputSchema[T any](edit func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("gateway: schema of %T: %v", *new(T), err)) // programmer error
	}
	if edit != nil {
		edit(s)
	}
	return s
}

var (
	readSchema = inputSchema[readIn](func(s *jsonschema.Schema) {
		s.Properties["offset"].Minimum = ptr(0.0)
		s.Properties["limit"].Minimum = ptr(0.0)
	})
	grepSchema = inputSchema[grepIn](func(s *jsonschema.Schema) {
		s.Properties["output_mode"].Enum = []any{string(vfs.GrepFilesWithMatches), string(vfs.GrepContent), string(vfs.GrepCount)}
	})
)

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// addTools registers every tool on the connection's server.
func (c *Conn) addTools(loadDesc string) {
	s := c.server
	s.AddTool(skillListTool(), c.skillListPlain)
	c.addLoadSkill(loadDesc)
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolUnloadSkill,
		Description: "Unload a loaded skill: its directory disappears from /skills. Pass its category/name, name, or mount path.",
		Annotations: additive("Unload a skill", true),
	}, c.unloadSkill)
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolLs,
		Description: "List a directory (non-recursive) as a list of absolute paths; directories end in '/'. " +
			"/ shows /workspace (your files), /skills once a skill is loaded, and configured mounts.",
		Annotations: readOnly("List directory"),
	}, c.ls)
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolReadFile,
		Description: "Read a text file with line numbers (cat -n format: the number right-aligned in 6 columns, a tab, the line). " +
			"offset is the 0-based first line, limit the number of lines (default 2000). Binary files are refused with their type and size.",
		InputSchema: readSchema,
		Annotations: readOnly("Read file"),
	}, c.readFile)
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolGrep,
		Description: "Search text files for a literal string. output_mode: files_with_matches (paths, the default), " +
			"content (each file then '  <line>: <text>'), or count ('<path>: <k>').",
		InputSchema: grepSchema,
		Annotations: readOnly("Search files"),
	}, c.grep)
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolGlob,
		Description: "Find files whose path relative to path matches a glob (* within a segment, ** across segments, {a,b} alternatives), one per line.",
		Annotations: readOnly("Find files"),
	}, c.glob)
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolWriteFile,
		Description: "Create a new file under /workspace. It never overwrites: to change an existing file, read it and use edit_file.",
		Annotations: additive("Write new file", false),
	}, c.writeFile)
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolEditFile,
		Description: "Replace old_string with new_string in a file under /workspace. old_string must occur exactly once " +
			"unless replace_all is true.",
		Annotations: destructive("Edit file"),
	}, c.editFile)
}

// addLoadSkill (re)registers load_skill with the given description;
// replacing it notifies connected clients (tools/list_changed).
func (c *Conn) addLoadSkill(desc string) {
	mcp.AddTool(c.server, &mcp.Tool{
		Name:        ToolLoadSkill,
		Description: desc,
		Annotations: additive("Load a skill", true),
	}, c.loadSkill)
}

func (c *Conn) loadSkill(ctx context.Context, _ *mcp.CallToolRequest, in skillIn) (*mcp.CallToolResult, loadOut, error) {
	l, err := c.sess.Load(ctx, in.Skill)
	if err != nil {
		return nil, loadOut{}, c.toolError(ctx, ToolLoadSkill, in.Skill, err)
	}
	c.g.sessionChanged(ctx, c.sess.ID())
	body, err := c.sess.SkillContent(ctx, l.Key, 0)
	if err != nil {
		return nil, loadOut{}, c.toolError(ctx, ToolLoadSkill, in.Skill, err)
	}
	out := loadOut{Skill: l.Key, Name: l.Name, Category: l.Category, Mount: l.Mount, Session: c.sess.ID()}
	return text(fmt.Sprintf("Loaded %s at %s\n\n%s", l.Key, l.Mount, body)), out, nil
}

func (c *Conn) unloadSkill(ctx context.Context, _ *mcp.CallToolRequest, in skillIn) (*mcp.CallToolResult, unloadOut, error) {
	l, err := c.sess.Unload(ctx, in.Skill)
	if err != nil {
		return nil, unloadOut{}, c.toolError(ctx, ToolUnloadSkill, in.Skill, err)
	}
	c.g.sessionChanged(ctx, c.sess.ID())
	return text(fmt.Sprintf("Unloaded %s from %s", l.Key, l.Mount)), unloadOut{Skill: l.Key, Mount: l.Mount, Session: c.sess.ID()}, nil
}

func (c *Conn) ls(ctx context.Context, _ *mcp.CallToolRequest, in lsIn) (*mcp.CallToolResult, any, error) {
	l, err := c.sess.FS().LsInfo(ctx, in.Path)
	if err != nil {
		return nil, nil, c.toolError(ctx, ToolLs, in.Path, err)
	}
	return text(vfs.FormatLs(l)), nil, nil
}

func (c *Conn) readFile(ctx context.Context, _ *mcp.CallToolRequest, in readIn) (*mcp.CallToolResult, any, error) {
	s, err := c.sess.FS().Read(ctx, in.FilePath, in.Offset, in.Limit)
	if err != nil {
		return nil, nil, c.toolError(ctx, ToolReadFile, in.FilePath, err)
	}
	return text(vfs.TruncateOutput(s)), nil, nil
}

func (c *Conn) grep(ctx context.Context, _ *mcp.CallToolRequest, in grepIn) (*mcp.CallToolResult, any, error) {
	mode, err := vfs.ParseGrepOutputMode(in.OutputMode)
	if err != nil {
		return nil, nil, c.toolError(ctx, ToolGrep, in.Path, err)
	}
	res, err := c.sess.FS().GrepRaw(ctx, in.Pattern, in.Path, in.Glob)
	if err != nil {
		return nil, nil, c.toolError(ctx, ToolGrep, in.Path, err)
	}
	return text(vfs.FormatGrep(res, mode)), nil, nil
}

func (c *Conn) glob(ctx context.Context, _ *mcp.CallToolRequest, in globIn) (*mcp.CallToolResult, any, error) {
	l, err := c.sess.FS().GlobInfo(ctx, in.Pattern, in.Path)
	if err != nil {
		return nil, nil, c.toolError(ctx, ToolGlob, in.Path, err)
	}
	return text(vfs.FormatGlob(l)), nil, nil
}

func (c *Conn) writeFile(ctx context.Context, _ *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, any, error) {
	if err := c.sess.FS().Write(ctx, in.FilePath, in.Content); err != nil {
		return nil, nil, c.toolError(ctx, ToolWriteFile, in.FilePath, err)
	}
	return text(vfs.FormatWrite(in.FilePath)), nil, nil
}

func (c *Conn) editFile(ctx context.Context, _ *mcp.CallToolRequest, in editIn) (*mcp.CallToolResult, any, error) {
	k, err := c.sess.FS().Edit(ctx, in.FilePath, in.OldString, in.NewString, in.ReplaceAll)
	if err != nil {
		return nil, nil, c.toolError(ctx, ToolEditFile, in.FilePath, err)
	}
	return text(vfs.FormatEdit(in.FilePath, k)), nil, nil
}

// addDisclosure registers the disclosure prompt and the disclosure and
// session resources.
func (c *Conn) addDisclosure() {
	c.server.AddPrompt(&mcp.Prompt{
		Name:  DisclosurePrompt,
		Title: "Skills",
		Description: "What you should know about skills now: with nothing loaded, the skills you may load " +
			"(name, description, category); with skills loaded, their instructions and files.",
		Arguments: []*mcp.PromptArgument{
			{Name: "category", Description: "only skills of this category (discovery only)"},
			{Name: "budget", Description: "size of the skill list in characters (discovery only; default 8000)"},
		},
	}, c.disclosurePrompt)
	c.server.AddResource(&mcp.Resource{
		URI: DisclosureURI, Name: "disclosure", Title: "Skills in context", MIMEType: "text/markdown",
		Description: "The session's skill disclosure, as the prompt 'skills' gives it with default arguments.",
	}, c.disclosureResource)
	c.server.AddResource(&mcp.Resource{
		URI: SessionURI, Name: "session", Title: "Session", MIMEType: "application/json",
		Description: "The session id (to resume it), its principal and its loaded skills with their mount paths.",
	}, c.sessionResource)
}

func (c *Conn) disclosurePrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	opts := session.DiscloseOptions{Budget: c.g.opts.DisclosureBudget}
	if req.Params != nil {
		opts.Category = req.Params.Arguments["category"]
		if b := req.Params.Arguments["budget"]; b != "" {
			var n int
			if _, err := fmt.Sscanf(b, "%d", &n); err != nil || n <= 0 {
				return nil, fmt.Errorf("budget must be a positive number of characters, got %q", b)
			}
			opts.Budget = n
		}
	}
	s, err := c.sess.Disclose(ctx, opts)
	if err != nil {
		return nil, c.toolError(ctx, "prompt "+DisclosurePrompt, "", err)
	}
	return &mcp.GetPromptResult{
		Description: "Skills in context",
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: s}}},
	}, nil
}

func (c *Conn) disclosureResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	s, err := c.sess.Disclose(ctx, session.DiscloseOptions{Budget: c.g.opts.DisclosureBudget})
	if err != nil {
		return nil, c.toolError(ctx, "resource "+DisclosureURI, "", err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: DisclosureURI, MIMEType: "text/markdown", Text: s}}}, nil
}

// SessionInfo is the content of the session resource.
type SessionInfo struct {
	Session string           `json:"session"`
	Tenant  string           `json:"tenant"`
	Agent   string           `json:"agent"`
	Tier    string           `json:"tier"`
	Loaded  []session.Loaded `json:"loaded"`
}

func (c *Conn) sessionResource(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	p := c.sess.Principal()
	info := SessionInfo{Session: c.sess.ID(), Tenant: p.Tenant, Agent: p.Agent, Tier: string(p.Tier), Loaded: c.sess.Loaded()}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: SessionURI, MIMEType: "application/json", Text: string(b)}}}, nil
}
