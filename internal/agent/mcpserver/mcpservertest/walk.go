// Package mcpservertest holds the seed 003 walk-through as a table of MCP tool
// calls with their exact expected results, so that the same walk runs
// against the gateway in memory, the built binary over stdio and over
// streamable HTTP, and an outside client (the MCP Inspector CLI).
package mcpservertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Step is one tool call of the walk and its exact expected text.
type Step struct {
	// What the step shows, for failure messages.
	What string
	Tool string
	Args map[string]any
	// Want is the exact text of the result; WantError says whether the
	// result must have isError set.
	Want      string
	WantError bool
}

// CallFunc calls tool with args on some MCP client and returns the
// concatenated text content of the result and its isError flag.
type CallFunc func(t testing.TB, tool string, args map[string]any) (string, bool)

// Walk returns the seed 003 walk over the example skills in examplesDir
// (examples/skills of the repository), for a session that starts with
// nothing loaded and has a read-only /ticket mount when withTicket is set:
// ls / without /skills → load_skill escrituras/compraventa → ls /, ls
// /skills, ls /skills/compraventa, ls /skills/compraventa/resources → read
// SKILL.md, disclosure_clausulas.md, resources/ejemplo.md → plantilla.pdf
// gives the binary error → /skills/hipoteca/SKILL.md (not loaded) gives the
// not-found error.
func Walk(t testing.TB, examplesDir string, withTicket bool) []Step {
	t.Helper()
	cv := filepath.Join(examplesDir, "escrituras", "compraventa")
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(cv, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pdf := read("resources/plantilla.pdf")
	root := []string{"/workspace/"}
	if withTicket {
		root = []string{"/ticket/", "/workspace/"}
	}
	list := func(ps ...string) string { return "['" + strings.Join(ps, "', '") + "']" }
	return []Step{
		{What: "nothing loaded: no /skills", Tool: "ls", Args: map[string]any{"path": "/"}, Want: list(root...)},
		{What: "skills are invisible before loading", Tool: "read_file", Args: map[string]any{"file_path": "/skills/compraventa/SKILL.md"},
			Want: "Error: File '/skills/compraventa/SKILL.md' not found", WantError: true},
		{What: "load", Tool: "load_skill", Args: map[string]any{"skill": "escrituras/compraventa"}, Want: LoadText(t, examplesDir)},
		{What: "/skills appears", Tool: "ls", Args: map[string]any{"path": "/"}, Want: list(append([]string{"/skills/"}, root...)...)},
		{What: "only the loaded skill", Tool: "ls", Args: map[string]any{"path": "/skills"}, Want: list("/skills/compraventa/")},
		{What: "the skill's files", Tool: "ls", Args: map[string]any{"path": "/skills/compraventa"},
			Want: list("/skills/compraventa/SKILL.md", "/skills/compraventa/disclosure_clausulas.md", "/skills/compraventa/resources/")},
		{What: "its resources", Tool: "ls", Args: map[string]any{"path": "/skills/compraventa/resources"},
			Want: list("/skills/compraventa/resources/ejemplo.md", "/skills/compraventa/resources/plantilla.pdf")},
		{What: "SKILL.md", Tool: "read_file", Args: map[string]any{"file_path": "/skills/compraventa/SKILL.md"}, Want: CatN(read("SKILL.md"))},
		{What: "progressive disclosure", Tool: "read_file", Args: map[string]any{"file_path": "/skills/compraventa/disclosure_clausulas.md"}, Want: CatN(read("disclosure_clausulas.md"))},
		{What: "example", Tool: "read_file", Args: map[string]any{"file_path": "/skills/compraventa/resources/ejemplo.md"}, Want: CatN(read("resources/ejemplo.md"))},
		{What: "binary", Tool: "read_file", Args: map[string]any{"file_path": "/skills/compraventa/resources/plantilla.pdf"},
			Want:      fmt.Sprintf("Error: '/skills/compraventa/resources/plantilla.pdf' is a binary file (application/pdf, %d bytes) and cannot be read as text. Refer to it by path.", len(pdf)),
			WantError: true},
		{What: "not loaded", Tool: "read_file", Args: map[string]any{"file_path": "/skills/hipoteca/SKILL.md"},
			Want: "Error: File '/skills/hipoteca/SKILL.md' not found", WantError: true},
	}
}

// Run performs the steps with call, reporting every mismatch.
func Run(t testing.TB, steps []Step, call CallFunc) {
	t.Helper()
	for i, s := range steps {
		got, isErr := call(t, s.Tool, s.Args)
		if got != s.Want || isErr != s.WantError {
			t.Errorf("step %d (%s): %s %v =\n%s\n(isError %v)\nwant\n%s\n(isError %v)", i+1, s.What, s.Tool, s.Args, got, isErr, s.Want, s.WantError)
		}
	}
}

// LoadText is load_skill's exact text for escrituras/compraventa.
func LoadText(t testing.TB, examplesDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, "escrituras", "compraventa", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	// The body is what follows the closing "---" line, trimmed.
	if i := strings.Index(body[3:], "\n---\n"); i >= 0 {
		body = body[3+i+len("\n---\n"):]
	}
	body = strings.TrimSpace(body)
	return "Loaded escrituras/compraventa at /skills/compraventa\n\n" +
		"<skill_content name=\"compraventa\">\n" + body + "\n\n" +
		"Skill directory: /skills/compraventa\n" +
		"Relative paths in this skill are relative to the skill directory.\n" +
		"<skill_resources>\n" +
		"<file>disclosure_clausulas.md</file>\n" +
		"<file>resources/ejemplo.md</file>\n" +
		"<file>resources/plantilla.pdf</file>\n" +
		"</skill_resources>\n</skill_content>"
}

// CatN formats short-lined text as read_file does (cat -n: the line number
// right-aligned in six columns, a tab, the line), written independently of
// the vfs formatter so that the walk checks it.
func CatN(content []byte) string {
	lines := strings.Split(strings.TrimSuffix(string(content), "\n"), "\n")
	for i, l := range lines {
		lines[i] = fmt.Sprintf("%6d\t%s", i+1, l)
	}
	return strings.Join(lines, "\n")
}
