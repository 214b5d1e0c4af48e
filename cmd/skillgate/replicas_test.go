package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
)

// TestAdoptFiles: a data directory whose tokens were kept in
// DATA/tokens.json before its store became PostgreSQL keeps them: the
// first command that reads the store's tokens copies the file in, once,
// and says so; from then on the store's copy is the one used.
func TestAdoptFiles(t *testing.T) {
	data := t.TempDir()
	if code, _, errs := run(t, data, "token", "add", "--agent", "drafter", "--tier", "T3", "--tenant", "acme"); code != 0 {
		t.Fatalf("token add on SQLite: %s", errs)
	}
	local := filepath.Join(data, "tokens.json")
	if _, err := os.Stat(local); err != nil {
		t.Fatal(err)
	}
	dsn := pgtest.NewDatabase(t)
	write(t, data, map[string]string{"config.yaml": "store: " + dsn + "\n"})
	steps := []struct {
		args     []string
		wantOut  string // a substring of stdout
		wantNote bool
	}{
		{[]string{"token", "ls"}, "drafter", true},
		{[]string{"token", "ls"}, "drafter", false},
		{[]string{"token", "add", "--agent", "scout", "--tier", "T4", "--tenant", "acme"}, "sgt_", false},
		{[]string{"token", "ls"}, "scout", false},
	}
	for _, st := range steps {
		code, out, errs := run(t, data, st.args...)
		note := strings.Contains(errs, local+" copied into the PostgreSQL store")
		if code != 0 || !strings.Contains(out, st.wantOut) || note != st.wantNote {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q in stdout, note %v", st.args, code, out, errs, st.wantOut, st.wantNote)
		}
	}
	// The file is left as it was: the token added since is not in it.
	if b, _ := os.ReadFile(local); strings.Contains(string(b), "scout") {
		t.Errorf("the local file changed: %s", b)
	}
}
