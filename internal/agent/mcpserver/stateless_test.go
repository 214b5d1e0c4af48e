package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// callOn calls tool on conn's server through an in-memory client at
// 2026-07-28 and returns its text and isError.
func callOn(t *testing.T, conn *mcpserver.Conn, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := conn.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: mcpserver.ModernProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError
}

// TestConnectStateless: requests naming a session share its connection,
// which stays open while idle less than the idle time and closes after; a
// session of another principal is refused, open or not; requests naming no
// session share their principal's sessionless connection, whose session
// changing tools refuse, and whose session no request may name.
func TestConnectStateless(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, storages[0])
		e.scan(t)
		ctx := context.Background()
		ana, eve := principal("ana", skill.T1), principal("eve", skill.T1)
		const idle = time.Minute

		c1, release1, err := e.gw.ConnectStateless(ctx, ana, "s-ana", idle)
		if err != nil {
			t.Fatal(err)
		}
		if got, isErr := callOn(t, c1, "load_skill", map[string]any{"skill": "escrituras/compraventa"}); isErr {
			t.Fatalf("load_skill: %s", got)
		}
		release1()
		c2, release2, err := e.gw.ConnectStateless(ctx, ana, "s-ana", idle)
		if err != nil || c2 != c1 {
			t.Fatalf("the second request of s-ana: %p %v, want the first's connection %p", c2, err, c1)
		}
		if got, _ := callOn(t, c2, "ls", map[string]any{"path": "/skills"}); got != "['/skills/compraventa/']" {
			t.Errorf("ls /skills = %s", got)
		}
		if _, _, err := e.gw.ConnectStateless(ctx, eve, "s-ana", idle); !errors.Is(err, session.ErrSessionUnavailable) {
			t.Errorf("eve in ana's open session: %v", err)
		}
		release2()
		time.Sleep(idle + time.Second)
		synctest.Wait()
		if n := e.gw.StatelessConnections(); n != 0 {
			t.Errorf("%d connections after the idle time, want 0", n)
		}
		if _, _, err := e.gw.ConnectStateless(ctx, eve, "s-ana", idle); !errors.Is(err, session.ErrSessionUnavailable) {
			t.Errorf("eve in ana's stored session: %v", err)
		}

		s1, rs1, err := e.gw.ConnectStateless(ctx, ana, "", idle)
		if err != nil {
			t.Fatal(err)
		}
		defer rs1()
		s2, rs2, err := e.gw.ConnectStateless(ctx, ana, "", idle)
		if err != nil || s2 != s1 {
			t.Fatalf("sessionless requests of one principal: %p %v, want %p", s2, err, s1)
		}
		defer rs2()
		if got, isErr := callOn(t, s1, "load_skill", map[string]any{"skill": "escrituras/compraventa"}); !isErr || got != mcpserver.SessionlessError {
			t.Errorf("load_skill without a session: %s", got)
		}
		if got, isErr := callOn(t, s1, "write_file", map[string]any{"file_path": "/workspace/x.md", "content": "x"}); !isErr || got != mcpserver.SessionlessError {
			t.Errorf("write_file without a session: %s", got)
		}
		if got, isErr := callOn(t, s1, "ls", map[string]any{"path": "/"}); isErr || strings.Contains(got, "/skills/") || !strings.Contains(got, "/workspace/") {
			t.Errorf("ls / without a session: %s", got)
		}
		if _, _, err := e.gw.ConnectStateless(ctx, ana, s1.Session().ID(), idle); !errors.Is(err, session.ErrSessionUnavailable) {
			t.Errorf("naming the sessionless connection's session: %v", err)
		}
	})
}

// TestConnectStatelessConcurrent: concurrent first requests of one session
// (and of no session) end up on one connection each.
func TestConnectStatelessConcurrent(t *testing.T) {
	e := newEnv(t, storages[0])
	ctx := context.Background()
	ana := principal("ana", skill.T1)
	for _, sid := range []string{"s-concurrent", ""} {
		conns := make([]*mcpserver.Conn, 8)
		releases := make([]func(), 8)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range conns {
			wg.Go(func() { conns[i], releases[i], errs[i] = e.gw.ConnectStateless(ctx, ana, sid, time.Minute) })
		}
		wg.Wait()
		for i := range conns {
			if errs[i] != nil || conns[i] != conns[0] {
				t.Fatalf("session %q, request %d: %p %v, want %p", sid, i, conns[i], errs[i], conns[0])
			}
			releases[i]()
		}
	}
	if n := e.gw.StatelessConnections(); n != 2 {
		t.Errorf("%d stateless connections, want 2", n)
	}
}
