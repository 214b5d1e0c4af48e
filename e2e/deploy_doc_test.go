//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// TestDeployDocReplicas runs docs/deploy.md's two-replica example as
// written, in one shell, in a fresh directory holding a copy of the
// examples, on a database of its own and a prefix of the test bucket:
// every command must exit 0. What the example assumes exists is given to
// it: the variables naming the database, the bucket and a credential
// (the example makes credentials.key itself with credential keygen); its
// two ports are replaced by free ones.
func TestDeployDocReplicas(t *testing.T) {
	if os.Getenv(EnvE2EStore) != "postgres" {
		t.Skip("runs in the PostgreSQL pass of scripts/test.sh (SKILLGATE_E2E_STORE=postgres)")
	}
	rs := newReplicaSet(t) // skips without the PostgreSQL and S3 test servers
	cmds := docBlock(t, filepath.Join("..", "docs", "deploy.md"), "### Example: two replicas")
	if len(cmds) < 12 {
		t.Fatalf("the example is shorter than expected: %+v", cmds)
	}
	work, home := t.TempDir(), t.TempDir()
	mcpservertest.CopyTree(t, examples, filepath.Join(work, "examples", "skills"))
	if err := os.Symlink(bin, filepath.Join(work, "skillgate")); err != nil {
		t.Fatal(err)
	}
	// The one substitution: the example's ports become free ones, so that
	// runs at once on one machine do not meet.
	ports := strings.NewReplacer("17781", freePort(t), "17782", freePort(t))
	var script strings.Builder
	script.WriteString("set -u\n")
	for _, c := range cmds {
		fmt.Fprintf(&script, "echo '### deploy.md:%d' >&2\n%src=$?\nif [ $rc -ne %d ]; then echo \"deploy.md:%d: exit $rc, want %d\" >&2; exit 99; fi\n",
			c.line, ports.Replace(c.text), c.exit, c.line, c.exit)
	}
	env := map[string]string{}
	for _, kv := range rs.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "LANG=C.UTF-8",
		"DATABASE_URL=" + rs.a.dsn,
		"S3_ENDPOINT=" + env["SKILLGATE_S3_ENDPOINT"], "S3_BUCKET=" + env["SKILLGATE_S3_BUCKET"],
		"S3_ACCESS_KEY=" + env["SKILLGATE_S3_ACCESS_KEY"], "S3_SECRET_KEY=" + env["SKILLGATE_S3_SECRET_KEY"],
		"SKILLGATE_S3_REGION=" + env["SKILLGATE_S3_REGION"], "SKILLGATE_S3_PREFIX=" + env["SKILLGATE_S3_PREFIX"],
		"ACME_GITHUB_TOKEN=ghp_example"}
	// The replicas it starts in the background die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("example: %v\nstderr:\n%s\nstdout:\n%s", err, errb.String(), out.String())
	}
	for _, want := range []string{
		`"ready"`,
		"GITHUB_TOKEN",
		"reads",
		"audit log OK: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("example output lacks %q:\nstdout:\n%s\nstderr:\n%s", want, out.String(), errb.String())
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
