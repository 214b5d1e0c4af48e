package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// tourCommand is one command of a README code block, with the exit code
// its trailing comment announces ("# exit 1: …"), else 0.
type tourCommand struct {
	line int // in README.md
	text string
	exit int
}

var (
	wantExit = regexp.MustCompile(`#.*\bexit (\d)\b`)
	goBuild  = "go build -o skillgate ./cmd/skillgate"
)

// readmeBlock returns the commands of the first ```sh block after the
// heading, joining continuation lines.
func readmeBlock(t *testing.T, heading string) []tourCommand {
	t.Helper()
	return docBlock(t, filepath.Join("..", "README.md"), heading)
}

// TestReadmeTour runs README.md's "A short tour" as written, command by
// command in one shell, in a fresh directory holding a copy of the
// examples: every command must exit as the README says (0 unless its
// comment says "exit N"). The one substitution: the first line's go build
// is replaced by a link to the binary TestMain built from the same tree.
func TestReadmeTour(t *testing.T) {
	cmds := readmeBlock(t, "## A short tour")
	if len(cmds) < 10 || strings.TrimSpace(cmds[0].text) != goBuild {
		t.Fatalf("the tour no longer starts with %q or is shorter than expected: %+v", goBuild, cmds)
	}
	work, home := t.TempDir(), t.TempDir()
	mcpservertest.CopyTree(t, examples, filepath.Join(work, "examples", "skills"))
	var script strings.Builder
	script.WriteString("set -u\n")
	for i, c := range cmds {
		text := c.text
		if i == 0 {
			text = "ln -s " + strconv.Quote(bin) + " skillgate\n"
		}
		fmt.Fprintf(&script, "echo '### README.md:%d' >&2\n%src=$?\nif [ $rc -ne %d ]; then echo \"README.md:%d: exit $rc, want %d\" >&2; exit 99; fi\n",
			c.line, text, c.exit, c.line, c.exit)
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "LANG=C.UTF-8"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tour: %v\nstderr:\n%s\nstdout:\n%s", err, errb.String(), out.String())
	}
	for _, want := range []string{
		"4 skills (4 valid, 0 rejected)",
		"root " + filepath.Join(home, ".agents", "skills") + " (user): not present\n",
		"identity:     escrituras/compraventa\n",
		"disabled hipoteca\n",
		"differ",
		"pdf-forms",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tour output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "removed: ") {
		t.Errorf("the tour drops skills from the registry:\n%s", out.String())
	}
	if !slices.ContainsFunc(cmds, func(c tourCommand) bool { return strings.HasPrefix(c.text, "./skillgate search ") }) {
		t.Error("the tour has no ranked search (./skillgate search)")
	}
	// What the tour shows a command printing ("#   " lines) is what it
	// prints.
	for _, l := range tourShown(t) {
		if !strings.Contains(out.String(), l+"\n") {
			t.Errorf("README.md shows %q, which the tour does not print:\n%s", l, out.String())
		}
	}
}

// tourShown returns the output README.md's tour shows under a command: its
// comment lines indented "#   ", without that prefix.
func tourShown(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, tour, _ := strings.Cut(string(b), "## A short tour\n")
	_, tour, _ = strings.Cut(tour, "```sh\n")
	tour, _, _ = strings.Cut(tour, "```\n")
	var shown []string
	for l := range strings.Lines(tour) {
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), "#   "); ok {
			shown = append(shown, rest)
		}
	}
	return shown
}
