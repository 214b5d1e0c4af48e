package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestScrubCredentials: a server that echoes its credential in stderr, in
// an error or in its tool list never gets the value into an error or a
// report, pins included, and the scrubbed pins still verify and match the
// live tool.
func TestScrubCredentials(t *testing.T) {
	t.Parallel()
	const secret = "tok-S3CRET-0123456789"
	opts := testOptions(testLimits())
	opts.Credentials = func(name string) (string, bool) {
		if name == "API_TOKEN" {
			return secret, true
		}
		return "", false
	}
	errTests := []struct {
		name    string
		mode    string
		env     map[string]string
		wantIs  error
		wantErr string
	}{
		{"stderr", testserver.ModeExit, map[string]string{testserver.EnvError: "token=${API_TOKEN}"}, mcpclient.ErrServerExited,
			`mcpclient: server "s": initialize: server process exited (exit status 2); stderr: "testserver: not an MCP server: token=[redacted:API_TOKEN]"`},
		{"JSON-RPC error", testserver.ModeRaw, map[string]string{testserver.EnvError: "bad token ${API_TOKEN}"}, mcpclient.ErrServerError,
			`mcpclient: server "s": tools/list: server returned an error: code -32603: "bad token [redacted:API_TOKEN]"`},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := mcpclient.Introspect(context.Background(), testDecl(t, "s", tc.mode, tc.env), opts)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("error\n got %v\nwant %s", err, tc.wantErr)
			}
			var se *mcpclient.ServerError
			if !errors.Is(err, tc.wantIs) || !errors.As(err, &se) || se.Phase == "" || strings.Contains(se.Error(), secret) {
				t.Errorf("error chain lost: Is %v, As %v", errors.Is(err, tc.wantIs), se)
			}
			// The stderr an exited server leaves in the chain is scrubbed.
			if xe := (*mcpclient.ExitError)(nil); errors.As(err, &xe) && xe.Stderr != "testserver: not an MCP server: token=[redacted:API_TOKEN]" {
				t.Errorf("ExitError.Stderr = %q", xe.Stderr)
			}
		})
	}
	t.Run("tool list", func(t *testing.T) {
		t.Parallel()
		result := `{"tools":[{"name":"t","description":"Calls the API with ${API_TOKEN}.","inputSchema":{"type":"object"}}]}`
		r, err := mcpclient.Introspect(context.Background(), testDecl(t, "s", testserver.ModeRaw, map[string]string{testserver.EnvResult: result}), opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Capabilities[0].Description; got != "Calls the API with [redacted:API_TOKEN]." {
			t.Errorf("description = %q", got)
		}
		b, _ := json.Marshal(r.RawToolsList)
		if strings.Contains(string(b), secret) || !strings.Contains(string(b), "[redacted:API_TOKEN]") {
			t.Errorf("raw tools list not scrubbed: %s", b)
		}
		if err := r.Pins.Verify(); err != nil {
			t.Errorf("pins no longer verify: %v", err)
		}
		pins, _ := json.Marshal(r.Pins)
		if strings.Contains(string(pins), secret) || !strings.Contains(string(pins), "[redacted:API_TOKEN]") {
			t.Errorf("pins not scrubbed: %s", pins)
		}
		if r.Capabilities[0].Pin != r.Pins.Tools[0].Digest {
			t.Errorf("capability pin %s, pinned %s", r.Capabilities[0].Pin, r.Pins.Tools[0].Digest)
		}
		// A connection re-checking the live tool against the scrubbed pins
		// sees no drift: both sides are scrubbed alike.
		c, err := mcpclient.Dial(context.Background(), testDecl(t, "s", testserver.ModeRaw, map[string]string{testserver.EnvResult: result}), &mcpclient.ConnOptions{Options: *opts, Pins: &r.Pins})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if d := c.Drift(); !d.Empty() {
			t.Errorf("drift against scrubbed pins: %+v", d)
		}
	})
}
