package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// TestAnalysisGrants: analysis records every path a server's declaration
// grants it at call time (review, the report, its schema), and blocks an
// install whose declaration names a path holding the data directory
// before the server starts.
func TestAnalysisGrants(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap; scripts/test.sh does)")
	}
	app := t.TempDir()
	data := filepath.Join(app, ".skillgate")
	os.MkdirAll(data, 0o700)
	creds := func(name string) (string, bool) { return "tok-" + name, name == "TOKEN" }
	e := openEnv(t, data, install.Options{Sandbox: &sandbox.Bubblewrap{Hide: []string{data}, MemoryBytes: -1}, Credentials: creds})
	work := t.TempDir()
	notes, memory := filepath.Join(work, "notes"), filepath.Join(work, "memory")
	os.MkdirAll(notes, 0o755)
	os.MkdirAll(memory, 0o755)
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantGrants []capability.Grant
		wantError  *manifest.ServerFailure
	}{
		{"listed", []string{notes}, map[string]string{"MEMORY_FILE_PATH": filepath.Join(memory, "m.jsonl"), "TOKEN": "${TOKEN}"},
			[]capability.Grant{{Path: notes, Access: capability.GrantReadWrite, From: "args[0]"}, {Path: memory, Access: capability.GrantReadWrite, From: "env MEMORY_FILE_PATH"}}, nil},
		{"refused", []string{app}, nil, []capability.Grant{}, &manifest.ServerFailure{Phase: "grants",
			Message: `mcpclient: server "notes": grants: sandbox: a path of the declaration would expose a hidden one: args[0] ` + app + " holds " + data +
				", skillgate's data directory (its database, tokens.json, credentials.key): name a directory that does not hold it (a subdirectory of " + app +
				" beside it, or keep skillgate's data directory elsewhere with --data)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decl := testServerDecl("normal", tt.env)
			decl["args"] = tt.args
			src := writeSkill(t, t.TempDir(), "g-"+tt.name, "---\nx\n", map[string]any{"notes": decl})
			r, err := e.svc.InstallWith(context.Background(), src, "test", install.Introspection{Credentials: []string{"TOKEN"}})
			if err != nil {
				t.Fatal(err)
			}
			sv := r.Servers[0]
			if !reflect.DeepEqual(sv.Grants, tt.wantGrants) || !reflect.DeepEqual(sv.Error, tt.wantError) {
				t.Fatalf("grants %+v, error %+v\nwant %+v, %+v", sv.Grants, sv.Error, tt.wantGrants, tt.wantError)
			}
			if tt.wantError != nil && r.State != store.StateBlocked {
				t.Errorf("state %s, want blocked", r.State)
			}
			checkSchemas(t, e.svc.Storage().VersionDir(r.Digest))
		})
	}
}
