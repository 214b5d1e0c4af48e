package install_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
)

// TestCredentialValuesNeverStored: a server given a credential that echoes
// it (on stderr as it fails, in an error, in its tool list) gets the value
// into no file of the data directory (install_report.json, the installs and
// audit tables of the database and its journal) and into no review, pending
// or list output, text or JSON.
func TestCredentialValuesNeverStored(t *testing.T) {
	const secret = "tok-S3CRET-echoed-0123456789"
	lookup := func(name string) (string, bool) {
		if name == "API_TOKEN" {
			return secret, true
		}
		return "", false
	}
	tests := []struct {
		name string
		mode string
		env  map[string]string
	}{
		{"stderr of a failing server", "exit", map[string]string{"SKILLGATE_TESTSERVER_ERROR": "token=${API_TOKEN}"}},
		{"JSON-RPC error", "raw", map[string]string{"SKILLGATE_TESTSERVER_ERROR": "bad token ${API_TOKEN}"}},
		{"tool list", "raw", map[string]string{"SKILLGATE_TESTSERVER_RESULT": `{"tools":[{"name":"t","description":"Calls the API with ${API_TOKEN}.","inputSchema":{"type":"object"}}]}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, install.Options{Credentials: lookup})
			env := map[string]string{"API_TOKEN": "${API_TOKEN}"}
			for k, v := range tc.env {
				env[k] = v
			}
			src := writeSkill(t, t.TempDir(), "echoer", "---\nEchoes its token.\n", map[string]any{"echo": testServerDecl(tc.mode, env)})
			r, err := e.svc.InstallWith(ctx, src, "operator:ana", install.Introspection{Credentials: []string{"API_TOKEN"}})
			if err != nil {
				t.Fatal(err)
			}
			pending, err := e.svc.Pending(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all, err := e.svc.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			review, err := e.svc.Review(ctx, "echoer")
			if err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{"install text": r.Text(), "review text": review.Text(),
				"install JSON": mustJSON(t, r), "review JSON": mustJSON(t, review),
				"pending JSON": mustJSON(t, pending), "list JSON": mustJSON(t, all)}
			if !strings.Contains(outputs["install JSON"]+outputs["review JSON"], "[redacted:API_TOKEN]") {
				t.Errorf("the echo is not in the review at all (the test proves nothing):\n%s", outputs["review text"])
			}
			for name, out := range outputs {
				if strings.Contains(out, secret) {
					t.Errorf("%s shows the credential:\n%s", name, out)
				}
			}
			var files []string
			err = filepath.WalkDir(e.data, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				files = append(files, strings.TrimPrefix(p, e.data))
				if strings.Contains(string(b), secret) {
					i := strings.Index(string(b), secret)
					t.Errorf("%s holds the credential: …%s…", p, strings.ToValidUTF8(string(b[max(0, i-300):min(len(b), i+60)]), "?"))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(files)
			if !strings.Contains(string(b), "skillgate.db") || !strings.Contains(string(b), "install_report.json") {
				t.Errorf("the database or the report was not checked: %s", b)
			}
		})
	}
}
