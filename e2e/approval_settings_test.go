package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalSettingsE2E is issue 32's item 6 through the binary: the
// operator approves the real npm filesystem server's tools with a path
// constraint on one and a grant for every call of another; a setting the
// policy engine could not enforce is refused and records nothing; the
// agent's calls are then decided by what the approval set, and review
// shows it.
func TestApprovalSettingsE2E(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	f := emptyFixture(t)
	files, allowed := filesTree(t)
	writeFile(t, filepath.Join(files, "secret.txt"), "secreto\n")
	src := writeImport(t, "files", "---\nRead notes with read_text_file and list_directory.\n",
		map[string]any{"fs": map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", files}}})
	f.run(t, "install", src)

	code, _, stderr := f.runCode(t, nil, "approve", "files", "--only", "fs/read_text_file,fs/list_directory",
		"--constraints", `fs/read_text_file={"argValues":{"mode":["fast"]}}`)
	if want := `approval settings refused: fs/read_text_file: constraints: argValues names the argument "mode", which fs/read_text_file does not take (it takes `; code != 2 || !strings.Contains(stderr, want) {
		t.Fatalf("approve with an argument the tool lacks: exit %d, stderr %q lacks %q", code, stderr, want)
	}
	if out := f.run(t, "review", "files"); !strings.Contains(out, "awaiting_approval") {
		t.Fatalf("a refused approval changed the install:\n%s", out)
	}
	f.run(t, "approve", "files", "--only", "fs/read_text_file,fs/list_directory",
		"--constraints", `fs/read_text_file={"pathGlobs":["`+allowed+`/**"]}`, "--approval", "fs/list_directory=always")
	f.run(t, "enable", "files")
	review := f.run(t, "review", "files")
	for _, want := range []string{`      constraints: {"pathGlobs":["` + allowed + `/**"]}`, "      calls need a grant: always",
		"operator: fs/list_directory approval=always by "} {
		if !strings.Contains(review, want) {
			t.Fatalf("review lacks %q:\n%s", want, review)
		}
	}

	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	writeFile(t, filepath.Join(f.data, "policies", "read.cedar"), `@id("read-anything")
permit (principal, action == Action::"invoke", resource) when { resource.riskLevel == "read" };
`)
	call := caller(f.agent(t, "T3"))
	for _, s := range []struct {
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"read_text_file", map[string]any{"path": filepath.Join(allowed, "seed.txt")}, false, "semilla"},
		{"read_text_file", map[string]any{"path": filepath.Join(files, "secret.txt")}, true, "skillgate: call to read_text_file denied: "},
		{"list_directory", map[string]any{"path": allowed}, true, "skillgate: list_directory needs a human's approval before you may call it"},
	} {
		got, isErr := call(t, s.tool, s.args)
		if isErr != s.isError || !strings.Contains(got, s.want) {
			t.Errorf("%s %v: error=%v %q, want error=%v containing %q", s.tool, s.args, isErr, got, s.isError, s.want)
		}
	}

	// The enabled skill's settings change in place: its reads now need a
	// grant too.
	if out := f.run(t, "approve", "files", "--approval", "fs/read_text_file=always"); !strings.Contains(out, "settings of 1 capability changed") {
		t.Fatalf("approve an enabled skill's settings:\n%s", out)
	}
	got, isErr := caller(f.agent(t, "T3"))(t, "read_text_file", map[string]any{"path": filepath.Join(allowed, "seed.txt")})
	if !isErr || !strings.Contains(got, "skillgate: read_text_file needs a human's approval before you may call it") {
		t.Errorf("read_text_file after its settings changed: error=%v %q", isErr, got)
	}
}
