package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStdioHostileURI sends the reported request to the real `skillgate
// mcp`: a resources/read of skill://pub/alpha/\u0000x used to make it exit
// (the go-sdk's not-found error is built with Go's %q, which is not JSON).
// It is answered with a JSON-RPC error, and the session goes on.
func TestStdioHostileURI(t *testing.T) {
	f := newFixture(t)
	cmd := exec.Command(bin, "--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", "acme")
	cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	exited := make(chan error, 1)
	t.Cleanup(func() {
		in.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	answer := func(send, id string) string {
		t.Helper()
		if _, err := io.WriteString(in, send+"\n"); err != nil {
			t.Fatalf("writing %s: %v", send, err)
		}
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("skillgate mcp closed its output after %s", send)
				}
				if !json.Valid([]byte(l)) {
					t.Fatalf("skillgate mcp wrote a line that is not JSON: %q", l)
				}
				if strings.Contains(l, `"id":`+id+`,`) {
					return l
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no answer to %s within 20s", send)
			}
		}
	}
	answer(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`, "1")
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	got := answer(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://pub/alpha/\u0000x"}}`, "2")
	if want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"skill://pub/alpha/\u0000x"}}}`; got != want {
		t.Errorf("resources/read:\n got %s\nwant %s", got, want)
	}
	if got := answer(`{"jsonrpc":"2.0","id":3,"method":"ping"}`, "3"); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("ping after the hostile read: %s", got)
	}
	go func() { exited <- cmd.Wait() }()
}
