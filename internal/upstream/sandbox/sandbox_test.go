package sandbox_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// requireBwrap skips where bwrap cannot run (scripts/test.sh installs it).
func requireBwrap(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("bubblewrap is Linux only")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap; scripts/test.sh does)")
	}
}

func run(t *testing.T, b sandbox.Bubblewrap, dir, script string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := b.Confine(cmd); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out.String())
	}
	return out.String()
}

func TestBubblewrap(t *testing.T) {
	requireBwrap(t)
	data := t.TempDir()
	tree := filepath.Join(data, "imported", "x", "skill")
	if err := os.MkdirAll(tree, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tree, "SKILL.md"), []byte("the skill\n"), 0o600)
	os.WriteFile(filepath.Join(data, "tokens.json"), []byte("secret tokens\n"), 0o600)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("reached\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := `cat SKILL.md
cat ` + filepath.Join(data, "tokens.json") + ` 2>/dev/null || echo "tokens hidden"
touch new 2>/dev/null || echo "tree read-only"
echo x > /tmp/t && echo "tmp writable"
ls -A /root | wc -l
grep "Max address space" /proc/self/limits | tr -s ' ' | cut -d' ' -f4
(exec 3<>/dev/tcp/127.0.0.1/` + itoa(port) + ` && head -1 <&3) 2>/dev/null || echo "no network"
`
	tests := []struct {
		name string
		b    sandbox.Bubblewrap
		want string
	}{
		{"default", sandbox.Bubblewrap{Hide: []string{data}}, "the skill\ntokens hidden\ntree read-only\ntmp writable\n0\n4294967296\nno network\n"},
		{"network allowed", sandbox.Bubblewrap{Hide: []string{data}, Network: true, MemoryBytes: 1 << 31}, "the skill\ntokens hidden\ntree read-only\ntmp writable\n0\n2147483648\nreached\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// bash for /dev/tcp.
			got := run(t, tt.b, tree, "exec /bin/bash -c '"+strings.ReplaceAll(script, "'", `'\''`)+"'")
			if got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBubblewrapUnavailable(t *testing.T) {
	b := sandbox.Bubblewrap{LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	err := b.Confine(exec.Command("/bin/true"))
	if !errors.Is(err, sandbox.ErrUnavailable) || err.Error() != "sandbox unavailable: bwrap not found (install bubblewrap: apt-get install bubblewrap)" {
		t.Fatalf("Confine = %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestBubblewrapExposesArguments: an existing absolute path among the
// program's arguments stays visible (read-only) in the private /tmp; one
// that is, holds or lies in a hidden directory, or a link to one, is
// refused and the server is not started.
func TestBubblewrapExposesArguments(t *testing.T) {
	requireBwrap(t)
	parent := t.TempDir()
	hidden := filepath.Join(parent, "data")
	os.MkdirAll(hidden, 0o700)
	os.WriteFile(filepath.Join(hidden, "secret"), []byte("secret\n"), 0o600)
	shared := t.TempDir()
	os.WriteFile(filepath.Join(shared, "notes.md"), []byte("notes\n"), 0o600)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(hidden, link); err != nil {
		t.Fatal(err)
	}
	b := sandbox.Bubblewrap{Hide: []string{hidden}}
	script := `for d in "$@"; do cat "$d"/* 2>/dev/null || echo "$d: not visible"; done`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", shared)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := b.Confine(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if want := "notes\n"; string(out) != want {
		t.Errorf("\n got %q\nwant %q", out, want)
	}
	for _, a := range []string{hidden, parent, link, filepath.Join(hidden, "secret")} {
		cmd := exec.Command("/bin/sh", "-c", script, "sh", a)
		if err := b.Confine(cmd); !errors.Is(err, sandbox.ErrHiddenGrant) {
			t.Errorf("Confine with %s: %v, want ErrHiddenGrant", a, err)
		}
	}
}

// TestBubblewrapExposesNodeModules: a script inside a node_modules tree in
// the private /tmp finds its dependencies there (an npm server installed
// under /tmp), and nothing beside that tree becomes visible.
func TestBubblewrapExposesNodeModules(t *testing.T) {
	requireBwrap(t)
	prefix := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(prefix, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("node_modules/@scope/server/dist/index.sh", `cat "$(dirname "$0")/../../../dep/lib.txt"; cat "$(dirname "$0")/../../../../beside.txt" 2>/dev/null || echo "beside: not visible"`)
	write("node_modules/dep/lib.txt", "dependency\n")
	write("beside.txt", "beside\n")
	script := filepath.Join(prefix, "node_modules", "@scope", "server", "dist", "index.sh")
	cmd := exec.Command("/bin/sh", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := (sandbox.Bubblewrap{}).Confine(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if want := "dependency\nbeside: not visible\n"; string(out) != want {
		t.Errorf("\n got %q\nwant %q", out, want)
	}
}

// bwrapOptions returns the options Confine passed bwrap through a file
// descriptor (--args), and checks that its command line says so.
func bwrapOptions(t *testing.T, cmd *exec.Cmd) []string {
	t.Helper()
	i := slices.Index(cmd.Args, "--args")
	if i < 0 || i+2 >= len(cmd.Args) || cmd.Args[i+1] != "3" || cmd.Args[i+2] != "--" || len(cmd.ExtraFiles) == 0 {
		t.Fatalf("bwrap is not given its options in descriptor 3: %q", cmd.Args)
	}
	b, err := io.ReadAll(cmd.ExtraFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// TestBubblewrapCommandLine is issue 28's item 10: bwrap's command line,
// which a confined server reads as /proc/1/cmdline, holds no host path
// but the command the server runs as: the hiding mounts, the grants, the
// helper's policy are in the options bwrap reads from a descriptor, and
// the policy reaches the helper in its environment, not its arguments.
func TestBubblewrapCommandLine(t *testing.T) {
	data := t.TempDir()
	work := t.TempDir()
	b := sandbox.Bubblewrap{Hide: []string{data}, LookPath: func(n string) (string, error) { return "/usr/bin/" + n, nil },
		Helper: []string{"/opt/skillgate", sandbox.HelperCommand}}
	cmd := exec.Command("/bin/server", "--root", work)
	cmd.Dir = work
	if err := b.Confine(cmd); err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/bwrap", "--args", "3", "--", "/opt/skillgate", sandbox.HelperCommand, "--", "/bin/server", "--root", work}
	if !slices.Equal(cmd.Args, want) {
		t.Errorf("command line %q\nwant %q", cmd.Args, want)
	}
	opts := bwrapOptions(t, cmd)
	for _, w := range [][]string{{"--tmpfs", data}, {"--ro-bind", work, work}} {
		if !strings.Contains(strings.Join(opts, "\x00"), strings.Join(w, "\x00")) {
			t.Errorf("options %q lack %q", opts, w)
		}
	}
	i := slices.Index(opts, "--setenv")
	if i < 0 || opts[i+1] != sandbox.PolicyEnv || !strings.Contains(opts[i+2], `"read":[`) {
		t.Errorf("options do not set the helper's policy: %q", opts)
	}
}
