package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/atomicfile"
)

// ScaffoldOptions says what 'skillgate init' creates.
type ScaffoldOptions struct {
	// Name is the skill's name; the folder Dir/Name is made for it, as
	// the specification wants a skill's folder named as the skill.
	Name string
	// Dir is the folder the skill's folder is made in; empty means the
	// current directory. It is created when missing.
	Dir string
	// Description is the frontmatter's description; empty gives a
	// placeholder that says what to write.
	Description string
	// MCP adds an mcp.json declaring one example MCP server, in the format
	// mcpclient.ParseConfig reads.
	MCP bool
}

// ScaffoldResult is what 'skillgate init' made (init --json prints it).
type ScaffoldResult struct {
	// Path is the skill's folder.
	Path string `json:"path"`
	// Name is the skill's name.
	Name string `json:"name"`
	// Files are the files written, relative to Path, sorted.
	Files []string `json:"files"`
}

// WriteText renders r for a person: what was made and what to do next.
func (r *ScaffoldResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "created skill %s in %s: %s\nnext: edit %s, then check it with 'skillgate validate --strict %s'\n",
		r.Name, r.Path, strings.Join(r.Files, ", "), filepath.Join(r.Path, "SKILL.md"), r.Path)
	return err
}

// exampleServerPackage is the MCP server mcp.json's example runs: the
// reference servers' test server, pinned as the install flow wants.
const exampleServerPackage = "@modelcontextprotocol/server-everything@2026.8.31"

// serverIDPattern is the shape mcpclient accepts for a server id.
var serverIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Scaffold creates a new skill folder Dir/Name holding a SKILL.md whose
// frontmatter and body template pass the specification's (skills-ref's)
// strict validation and, with MCP, an example mcp.json. It refuses, as a
// [UsageError], a name or description the specification rejects (with the
// specification's messages) and a folder that exists and is not empty;
// nothing is written then. Files are created whole or not at all
// (atomicfile.WriteNew) and never replace a file.
func Scaffold(opts ScaffoldOptions) (*ScaffoldResult, error) {
	desc := opts.Description
	if desc == "" {
		desc = "Replace this line with what " + opts.Name + " does and when an agent should use it (agents read it to choose the skill)."
	}
	content, err := skillTemplate(opts.Name, desc, opts.MCP)
	if err != nil {
		return nil, err
	}
	s := skill.Parse(content, opts.Name, skill.Options{Mode: skill.Strict})
	if !s.Valid() {
		return nil, Usagef("init: %s (a name is lowercase letters, digits and single hyphens, at most %d characters; a description 1 to %d characters)",
			strings.Join(s.Errors(), "; "), skill.MaxNameLength, skill.MaxDescriptionLength)
	}
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	path := filepath.Join(dir, opts.Name)
	entries, err := os.ReadDir(path)
	switch {
	case err == nil && len(entries) > 0:
		return nil, Usagef("init: %s already exists and is not empty; choose another NAME or --dir, or remove the folder", path)
	case err != nil && errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
	case err != nil:
		if _, serr := os.Stat(path); serr == nil && !isDir(path) {
			return nil, Usagef("init: %s exists and is not a folder; choose another NAME or --dir", path)
		}
		return nil, fmt.Errorf("init: %w", err)
	}
	files := map[string][]byte{"SKILL.md": content}
	if opts.MCP {
		files["mcp.json"] = mcpTemplate(opts.Name)
	}
	res := &ScaffoldResult{Path: path, Name: opts.Name}
	for _, name := range []string{"SKILL.md", "mcp.json"} {
		data, ok := files[name]
		if !ok {
			continue
		}
		if err := atomicfile.WriteNew(filepath.Join(path, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		res.Files = append(res.Files, name)
	}
	return res, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// skillTemplate is the SKILL.md of a new skill: the frontmatter (written
// by the YAML encoder, so any description is quoted as YAML needs) and a
// body that says what goes where.
func skillTemplate(name, desc string, withMCP bool) ([]byte, error) {
	fm, err := yaml.Marshal(struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}{name, desc})
	if err != nil {
		return nil, fmt.Errorf("init: frontmatter: %w", err)
	}
	var b strings.Builder
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n\n# " + name + "\n\n")
	b.WriteString(`One or two sentences on the task this skill performs and the result it gives.

## When to use

- The requests or situations in which an agent should load this skill.
- When not to use it, if another skill fits better.

## Steps

1. The first thing the agent does, as an instruction.
2. The next step; name the files below when a step needs one.

## Files

Put scripts in ` + "`scripts/`" + `, reference material in ` + "`references/`" + ` and templates
in ` + "`assets/`" + `, and say here when the agent should read each: it loads them only
when this text tells it to.
`)
	if withMCP {
		b.WriteString(`
## Tools

` + "`mcp.json`" + ` declares the MCP server whose tools this skill uses (an example:
the reference test server; put yours in its place). skillgate introspects it at
install and offers its tools to agents as capabilities, each decided by policy.
A server that needs a secret names it as ` + "`${NAME}`" + ` in an ` + "`env`" + ` or ` + "`headers`" + `
value, and skillgate supplies it from ` + "`skillgate credential set NAME --tenant T`" + `.
`)
	}
	return []byte(b.String()), nil
}

// mcpTemplate is the example mcp.json: one stdio server launched from a
// pinned npm package, under the skill's name as its id when that is a
// valid server id.
func mcpTemplate(name string) []byte {
	id := name
	if !serverIDPattern.MatchString(id) {
		id = "server"
	}
	return []byte(`{
  "mcpServers": {
    "` + id + `": {
      "command": "npx",
      "args": ["-y", "` + exampleServerPackage + `"]
    }
  }
}
`)
}
