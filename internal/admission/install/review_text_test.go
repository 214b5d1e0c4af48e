package install_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestReviewTextShowsWhatServersGet: the text review (not only --json)
// shows each server's exact command line, the names of the environment
// variables and headers it would receive, and which of them are
// credentials; a credential not named by the operator is withheld before
// approval and the review says how to approve it. No value is shown.
func TestReviewTextShowsWhatServersGet(t *testing.T) {
	t.Setenv("NOTES_TOKEN", "operator-secret-value")
	ctx := context.Background()
	e := newEnv(t, install.Options{})
	src := writeSkill(t, t.TempDir(), "notes", "---\nTakes notes.\n", map[string]any{
		"notes": map[string]any{
			"command": "/nonexistent/notes-server",
			"args":    []string{"--root", "/srv/my notes", "--mode=it's"},
			"env":     map[string]string{"NOTES_TOKEN": "${NOTES_TOKEN}", "MODE": "fast"},
		},
	})
	r, err := e.svc.Install(ctx, src, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.StateBlocked {
		t.Fatalf("state %s, want blocked", r.State)
	}
	txt := r.Text()
	const want = "server notes: not reached, 0 tools\n" +
		"  runs: /nonexistent/notes-server --root '/srv/my notes' '--mode=it'\\''s'\n" +
		"  env: MODE, NOTES_TOKEN\n" +
		"  credentials: NOTES_TOKEN\n" +
		"  error (credentials): "
	if !strings.Contains(txt, want) {
		t.Errorf("review text lacks\n%s\n---\n%s", want, txt)
	}
	if !strings.Contains(txt, "NOTES_TOKEN not given to the server") || !strings.Contains(txt, "skillgate recheck notes --credential NOTES_TOKEN") {
		t.Errorf("review text does not say how to give the credential:\n%s", txt)
	}
	if strings.Contains(txt, "operator-secret-value") {
		t.Errorf("review text shows a credential value:\n%s", txt)
	}
}
