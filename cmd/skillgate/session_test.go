package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// seedSessions stores three sessions with a workspace file each: two last
// used long ago (on fixed dates) and one used now.
func seedSessions(t *testing.T, data string) time.Time {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UTC().Truncate(time.Second)
	for _, s := range []struct {
		id, agent string
		at        time.Time
		skills    []store.LoadedSkill
	}{
		{"s-old", "drafter", time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC), []store.LoadedSkill{{Key: "docs/pdf", Mount: "pdf"}, {Key: "escrituras/compraventa", Mount: "compraventa"}}},
		{"s-mid", "reviewer", time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC), nil},
		{"s-new", "drafter", now, nil},
	} {
		db.Now = func() time.Time { return s.at }
		if err := db.CreateSession(ctx, store.Session{ID: s.id, Tenant: "acme", Agent: s.agent, Tier: "T3", Skills: s.skills}); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(data, "workspaces", "acme", "sessions", s.id, "workspace"), map[string]string{"notes.md": "notes of " + s.id})
	}
	return now
}

func workspaceExists(data, id string) bool {
	_, err := os.Stat(filepath.Join(data, "workspaces", "acme", "sessions", id, "workspace", "notes.md"))
	return err == nil
}

// TestSessionCLI: session ls (text and JSON), prune (dry run, by flag, by
// the configured idle expiry) and rm, with their exact outputs and exit
// codes; removing a session deletes its workspace.
func TestSessionCLI(t *testing.T) {
	data := t.TempDir()
	if code, out, errs := run(t, data, "session", "ls"); code != 0 || out != "" || errs != "no sessions\n" {
		t.Fatalf("ls on an empty store: %d %q %q", code, out, errs)
	}
	now := seedSessions(t, data)
	nowText := now.Format(time.RFC3339)

	type step struct {
		name     string
		args     []string
		config   string
		code     int
		out, err string
		kept     []string // sessions whose workspace must exist after
		gone     []string // and must not
	}
	steps := []step{
		{name: "ls json", args: []string{"session", "ls", "--json"}, out: `[
  {
    "id": "s-old",
    "principal": "acme/drafter@T3",
    "skills": [
      "docs/pdf",
      "escrituras/compraventa"
    ],
    "created": "2025-01-01T09:00:00Z",
    "last_used": "2025-01-01T09:00:00Z"
  },
  {
    "id": "s-mid",
    "principal": "acme/reviewer@T3",
    "skills": [],
    "created": "2025-03-01T09:00:00Z",
    "last_used": "2025-03-01T09:00:00Z"
  },
  {
    "id": "s-new",
    "principal": "acme/drafter@T3",
    "skills": [],
    "created": "` + nowText + `",
    "last_used": "` + nowText + `"
  }
]
`},
		{name: "ls text", args: []string{"session", "ls"}, out: "" +
			"ID     PRINCIPAL         SKILLS                           CREATED               LAST USED\n" +
			"s-old  acme/drafter@T3   docs/pdf,escrituras/compraventa  2025-01-01T09:00:00Z  2025-01-01T09:00:00Z\n" +
			"s-mid  acme/reviewer@T3  -                                2025-03-01T09:00:00Z  2025-03-01T09:00:00Z\n" +
			"s-new  acme/drafter@T3   -                                " + nowText + "  " + nowText + "\n"},
		{name: "prune dry run", args: []string{"session", "prune", "--idle", "30d", "--dry-run"},
			out: "" +
				"ID     PRINCIPAL         SKILLS                           CREATED               LAST USED\n" +
				"s-old  acme/drafter@T3   docs/pdf,escrituras/compraventa  2025-01-01T09:00:00Z  2025-01-01T09:00:00Z\n" +
				"s-mid  acme/reviewer@T3  -                                2025-03-01T09:00:00Z  2025-03-01T09:00:00Z\n",
			err: "would prune 2 sessions unused for more than 30d\n", kept: []string{"s-old", "s-mid", "s-new"}},
		{name: "prune bad idle", args: []string{"session", "prune", "--idle", "3x"}, code: 2,
			err: "Error: --idle: \"3x\" is not a positive duration like 90m, 12h or 30d\n"},
		{name: "prune by the default idle expiry", args: []string{"session", "prune", "--dry-run"},
			out: "" +
				"ID     PRINCIPAL         SKILLS                           CREATED               LAST USED\n" +
				"s-old  acme/drafter@T3   docs/pdf,escrituras/compraventa  2025-01-01T09:00:00Z  2025-01-01T09:00:00Z\n" +
				"s-mid  acme/reviewer@T3  -                                2025-03-01T09:00:00Z  2025-03-01T09:00:00Z\n",
			err: "would prune 2 sessions unused for more than 1d\n", kept: []string{"s-old", "s-mid", "s-new"}},
		{name: "prune without idle", args: []string{"session", "prune"}, config: "sessions:\n  idle_expiry: never\n", code: 2,
			err: "Error: prune needs --idle DURATION (e.g. --idle 30d), or sessions.idle_expiry in the configuration file\n"},
		{name: "rm", args: []string{"session", "rm", "s-old", "nope"}, code: 1,
			out: "removed s-old (acme/drafter@T3)\n", err: "skillgate session rm: no such session: nope (list them with skillgate session ls)\n",
			kept: []string{"s-mid", "s-new"}, gone: []string{"s-old"}},
		{name: "rm bad id", args: []string{"session", "rm", "../x"}, code: 2,
			err: "Error: invalid session id: session id \"../x\" must be letters, digits, '.', '_' and '-', starting with a letter or digit\n"},
		{name: "bad configured idle", args: []string{"session", "ls"}, config: "sessions:\n  idle_expiry: soon\n", code: 1,
			err: "Error: config " + filepath.Join(data, "config.yaml") + ": sessions.idle_expiry: \"soon\" is not a positive duration like 90m, 12h or 30d (0 or never keeps sessions; the default is 1d)\n"},
		{name: "prune by the configured idle expiry", args: []string{"session", "prune", "--json"}, config: "sessions:\n  idle_expiry: 30d\n",
			out: `[
  {
    "id": "s-mid",
    "principal": "acme/reviewer@T3",
    "skills": [],
    "created": "2025-03-01T09:00:00Z",
    "last_used": "2025-03-01T09:00:00Z"
  }
]
`, kept: []string{"s-new"}, gone: []string{"s-mid"}},
		{name: "ls after", args: []string{"session", "ls"}, out: "" +
			"ID     PRINCIPAL        SKILLS  CREATED               LAST USED\n" +
			"s-new  acme/drafter@T3  -       " + nowText + "  " + nowText + "\n"},
	}
	for _, s := range steps {
		if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(s.config), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, data, s.args...)
		if code != s.code || out != s.out || errs != s.err {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", s.name, code, s.code, out, s.out, errs, s.err)
		}
		for _, id := range s.kept {
			if !workspaceExists(data, id) {
				t.Errorf("%s: workspace of %s deleted", s.name, id)
			}
		}
		for _, id := range s.gone {
			if workspaceExists(data, id) {
				t.Errorf("%s: workspace of %s kept", s.name, id)
			}
		}
	}
}
