package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// TestSupplyChainDoc runs the walkthrough of docs/supply-chain.md as
// written, in one shell, in a fresh directory holding a copy of the
// examples: every command must exit as the document says.
func TestSupplyChainDoc(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmds := docBlock(t, filepath.Join("..", "docs", "supply-chain.md"), "## Walkthrough")
	if len(cmds) < 15 {
		t.Fatalf("the walkthrough is shorter than expected: %+v", cmds)
	}
	work, home := t.TempDir(), t.TempDir()
	mcpservertest.CopyTree(t, examples, filepath.Join(work, "examples", "skills"))
	if err := os.Symlink(bin, filepath.Join(work, "skillgate")); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -u\n")
	for _, c := range cmds {
		fmt.Fprintf(&script, "echo '### supply-chain.md:%d' >&2\n%src=$?\nif [ $rc -ne %d ]; then echo \"supply-chain.md:%d: exit $rc, want %d\" >&2; exit 99; fi\n",
			c.line, c.text, c.exit, c.line, c.exit)
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "LANG=C.UTF-8",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("walkthrough: %v\nstderr:\n%s\nstdout:\n%s", err, errb.String(), out.String())
	}
	for _, want := range []string{
		"valid: pdf-forms sha256:",
		"modified after signing",
		"signed 3 skills of skills for first_party by Release team",
		"valid: skills/.skillgate-index.dsse.json signs 3 skills for first_party by Release team",
		"3 skills (3 valid, 0 rejected)",
		"hipoteca: skills/.skillgate-index.dsse.json: modified after signing: escrituras/hipoteca is now sha256:",
		"source: git file://" + filepath.Join(work, "repo") + " ref main commit ",
		"locked 1 skill in skillgate.lock",
		"compraventa sha256:",
		"only files changed",
		"ref main moved: the lock has commit ",
	} {
		if !strings.Contains(out.String()+errb.String(), want) {
			t.Errorf("walkthrough output lacks %q:\nstdout:\n%s\nstderr:\n%s", want, out.String(), errb.String())
		}
	}
}

// docBlock returns the commands of the first ```sh block after heading in
// file, as readmeBlock does for README.md.
func docBlock(t *testing.T, file, heading string) []tourCommand {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return shBlock(t, file, string(b), heading)
}

// shBlock parses the first ```sh block after heading in text.
func shBlock(t *testing.T, file, text, heading string) []tourCommand {
	t.Helper()
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && lines[i] != heading {
		i++
	}
	for i < len(lines) && lines[i] != "```sh" {
		i++
	}
	if i == len(lines) {
		t.Fatalf("%s has no sh block under %q", file, heading)
	}
	var out []tourCommand
	var cur *tourCommand
	for i++; i < len(lines) && lines[i] != "```"; i++ {
		l := lines[i]
		if cur == nil {
			if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			out = append(out, tourCommand{line: i + 1})
			cur = &out[len(out)-1]
		}
		cur.text += l + "\n"
		if !strings.HasSuffix(l, "\\") {
			if m := wantExit.FindStringSubmatch(l); m != nil {
				cur.exit, _ = strconv.Atoi(m[1])
			}
			cur = nil
		}
	}
	return out
}
