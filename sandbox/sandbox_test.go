package sandbox_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/sandbox"
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
// program's arguments stays visible (read-only) in the private /tmp, but
// not one in a hidden directory, nor a link into one.
func TestBubblewrapExposesArguments(t *testing.T) {
	requireBwrap(t)
	hidden := t.TempDir()
	os.WriteFile(filepath.Join(hidden, "secret"), []byte("secret\n"), 0o600)
	shared := t.TempDir()
	os.WriteFile(filepath.Join(shared, "notes.md"), []byte("notes\n"), 0o600)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(hidden, link); err != nil {
		t.Fatal(err)
	}
	b := sandbox.Bubblewrap{Hide: []string{hidden}}
	cmd := exec.Command("/bin/sh", "-c", `for d in "$@"; do cat "$d"/* 2>/dev/null || echo "$d: not visible"; done`, "sh", shared, hidden, link)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := b.Confine(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "notes\n" + hidden + ": not visible\n" + link + ": not visible\n"
	if string(out) != want {
		t.Errorf("\n got %q\nwant %q", out, want)
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
