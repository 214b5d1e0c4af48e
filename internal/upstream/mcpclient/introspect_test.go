package mcpclient_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// riskWant is the expected derivation for one tool: value, source and basis
// per field ("" value means unknown).
type riskWant struct {
	risk, riskSrc, riskBasis       string
	effects, effSrc, effBasis      string
	egress, egressSrc, egressBasis string
}

func gotRisk(m capability.RiskMetadata) riskWant {
	return riskWant{
		string(m.RiskLevel.Value), string(m.RiskLevel.Source), m.RiskLevel.Basis,
		string(m.SideEffects.Value), string(m.SideEffects.Source), m.SideEffects.Basis,
		string(m.DataEgress.Value), string(m.DataEgress.Source), m.DataEgress.Basis,
	}
}

func TestIntrospectNormalServer(t *testing.T) {
	t.Parallel()
	decl := testDecl(t, "notes", testserver.ModeNormal, nil)
	r, err := mcpclient.Introspect(context.Background(), decl, testOptions(testLimits()))
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, decl)

	if r.ServerID != "notes" || r.Server != (capability.ServerIdentity{Name: "skillgate-testserver", Version: "1.0.0"}) || !r.ToolsCapability {
		t.Errorf("server = %q %+v tools=%v", r.ServerID, r.Server, r.ToolsCapability)
	}
	const ann = "annotations: "
	const meta = `_meta["io.skillgate/risk"].`
	want := map[string]riskWant{
		"add_note": {
			"write", "annotations", ann + "readOnlyHint=false, destructiveHint=false",
			"internal", "annotations", ann + "readOnlyHint=false, destructiveHint=false, openWorldHint=false",
			"none", "annotations", ann + "openWorldHint=false",
		},
		"bare": {},
		"delete_notes": {
			"destructive", "annotations", ann + "readOnlyHint=false, destructiveHint=true",
			"internal", "annotations", ann + "readOnlyHint=false, destructiveHint=true, openWorldHint=false",
			"none", "annotations", ann + "openWorldHint=false",
		},
		"echo": {
			"read", "annotations", ann + "readOnlyHint=true",
			"none", "annotations", ann + "readOnlyHint=true",
			"none", "annotations", ann + "openWorldHint=false",
		},
		"read_env": {
			"read", "annotations", ann + "readOnlyHint=true",
			"none", "annotations", ann + "readOnlyHint=true",
			"none", "annotations", ann + "openWorldHint=false",
		},
		"send_email": {
			"write", "server_meta", meta + "riskLevel",
			"external", "server_meta", meta + "sideEffects",
			"network", "server_meta", meta + "dataEgress",
		},
		// The Go SDK sends readOnlyHint=false for any annotated tool; alone
		// it decides nothing.
		"titled": {},
		"web_search": {
			"read", "annotations", ann + "readOnlyHint=true",
			"none", "annotations", ann + "readOnlyHint=true",
			"network", "annotations", ann + "openWorldHint=true",
		},
	}
	var names []string
	for _, c := range r.Capabilities {
		names = append(names, c.CapabilityID)
		if c.ExtensionID != "notes" {
			t.Errorf("%s: extensionId = %q", c.CapabilityID, c.ExtensionID)
		}
		if len(c.Problems) > 0 {
			t.Errorf("%s: problems %+v", c.CapabilityID, c.Problems)
		}
		if got := gotRisk(c.Risk); got != want[c.CapabilityID] {
			t.Errorf("%s: risk\n got %+v\nwant %+v", c.CapabilityID, got, want[c.CapabilityID])
		}
		pin, ok := r.Pins.Lookup(c.CapabilityID)
		if !ok || pin.Digest != c.Pin || !strings.HasPrefix(c.Pin, "sha256:") {
			t.Errorf("%s: pin %q, pin set has %q", c.CapabilityID, c.Pin, pin.Digest)
		}
	}
	wantNames := []string{"add_note", "bare", "delete_notes", "echo", "read_env", "send_email", "titled", "web_search"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("capabilities = %v, want %v", names, wantNames)
	}
	wantMissing := []mcpclient.MissingMetadata{
		{CapabilityID: "bare", Fields: []string{"riskLevel", "sideEffects", "dataEgress"}},
		{CapabilityID: "titled", Fields: []string{"riskLevel", "sideEffects", "dataEgress"}},
	}
	if got := r.Missing(); !reflect.DeepEqual(got, wantMissing) {
		t.Errorf("Missing() = %+v, want %+v", got, wantMissing)
	}
	echo, _ := r.Capability("echo")
	if string(echo.OutputSchema) != `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}` {
		t.Errorf("echo outputSchema = %s", echo.OutputSchema)
	}
	if err := r.Pins.Verify(); err != nil {
		t.Errorf("Pins.Verify: %v", err)
	}
	if len(r.RawToolsList) != 1 || r.RawToolsList[0].Bytes != len(r.RawToolsList[0].Result) {
		t.Fatalf("raw pages = %+v", r.RawToolsList)
	}
	// The typed SDK Tool cannot tell an absent readOnlyHint from false; the
	// raw page keeps exactly what was sent.
	if !strings.Contains(string(r.RawToolsList[0].Result), `"readOnlyHint":false,"title":"Titled"`) {
		t.Errorf("raw page lacks the titled annotations: %s", r.RawToolsList[0].Result)
	}
}

// TestIntrospectKeepsRawBytes checks that the raw tools/list result is kept
// byte for byte, including whitespace and the fields the SDK's typed Tool
// drops (execution, unknown annotation keys).
func TestIntrospectKeepsRawBytes(t *testing.T) {
	t.Parallel()
	const result = `{ "tools" : [ {"name":"t","inputSchema":{"type":"object"},` +
		`"annotations":{"readOnlyHint":true,"secretHint":true},"execution":{"taskSupport":"forbidden"}} ] }`
	decl := testDecl(t, "raw", testserver.ModeRaw, map[string]string{testserver.EnvResult: result})
	r, err := mcpclient.Introspect(context.Background(), decl, testOptions(testLimits()))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.RawToolsList) != 1 || string(r.RawToolsList[0].Result) != result {
		t.Fatalf("raw = %+v, want %s", r.RawToolsList, result)
	}
	if sum := sha256.Sum256([]byte(result)); r.RawToolsList[0].SHA256 != hex.EncodeToString(sum[:]) || r.RawToolsList[0].Bytes != len(result) {
		t.Errorf("sha256 = %q, bytes = %d", r.RawToolsList[0].SHA256, r.RawToolsList[0].Bytes)
	}
	if r.Server != (capability.ServerIdentity{Name: "raw-server", Version: "0.0.1"}) || r.ProtocolVersion != "2025-11-25" {
		t.Errorf("server %+v protocol %q", r.Server, r.ProtocolVersion)
	}
	pin, _ := r.Pins.Lookup("t")
	const wantDef = `{"annotations":{"readOnlyHint":true,"secretHint":true},"execution":{"taskSupport":"forbidden"},"inputSchema":{"type":"object"},"name":"t"}`
	if string(pin.Definition) != wantDef {
		t.Errorf("pinned definition = %s, want %s", pin.Definition, wantDef)
	}
	assertGone(t, decl)
}

func TestIntrospectBadServers(t *testing.T) {
	t.Parallel()
	short := testLimits()
	short.InitializeTimeout = 300 * time.Millisecond
	short.ListTimeout = 300 * time.Millisecond
	// shortList gives the server (this test binary, slow to start under the
	// race detector on a busy machine) the usual time to initialize.
	shortList := testLimits()
	shortList.ListTimeout = 300 * time.Millisecond
	// hangInit leaves the hanging server time to start and record its
	// pids before the limit kills it.
	hangInit := testLimits()
	hangInit.InitializeTimeout = 2 * time.Second
	pidFile := filepath.Join(t.TempDir(), "pids")

	tests := []struct {
		name    string
		mode    string
		env     map[string]string
		command string // replaces the test binary when set
		limits  mcpclient.Limits
		wantIs  error
		wantErr string
		within  time.Duration
		pidFile string // the server writes its and its child's pid here
	}{
		{
			name: "command does not exist", mode: testserver.ModeNormal, command: "/nonexistent/mcp-server",
			wantIs:  mcpclient.ErrServerStart,
			wantErr: `mcpclient: server "s": start: server did not start: command "/nonexistent/mcp-server" does not exist`,
			within:  time.Second,
		},
		{
			name: "command not on PATH", mode: testserver.ModeNormal, command: "skillgate-no-such-mcp-server",
			wantIs:  mcpclient.ErrServerStart,
			wantErr: `mcpclient: server "s": start: server did not start: command "skillgate-no-such-mcp-server" not found in PATH`,
			within:  time.Second,
		},
		{
			name: "exits before initialize", mode: testserver.ModeExit,
			wantIs:  mcpclient.ErrServerExited,
			wantErr: `mcpclient: server "s": initialize: server process exited (exit status 2); stderr: "testserver: not an MCP server"`,
			within:  5 * time.Second,
		},
		{
			name: "prints text on stdout", mode: testserver.ModeBanner,
			wantIs:  mcpclient.ErrConnection,
			wantErr: `mcpclient: server "s": initialize: connection failed: connection closed: calling "initialize": client is closing: invalid character 'S' looking for beginning of value`,
			within:  5 * time.Second,
		},
		{
			name: "hangs at initialize, ignores SIGTERM", mode: testserver.ModeHangInitialize,
			env:     map[string]string{testserver.EnvPIDFile: pidFile},
			pidFile: pidFile,
			limits:  hangInit,
			wantIs:  mcpclient.ErrTimeout,
			wantErr: `mcpclient: server "s": initialize: server did not answer in time (limit 2s)`,
			within:  5 * time.Second,
		},
		{
			name: "hangs at tools/list", mode: testserver.ModeHangList, limits: shortList,
			wantIs:  mcpclient.ErrTimeout,
			wantErr: `mcpclient: server "s": tools/list: server did not answer in time (limit 300ms)`,
			within:  5 * time.Second,
		},
		{
			name: "crashes at tools/list", mode: testserver.ModeCrashList,
			wantIs:  mcpclient.ErrServerExited,
			wantErr: `mcpclient: server "s": tools/list: server process exited (exit status 3); stderr: "testserver: crashing during tools/list"`,
			within:  5 * time.Second,
		},
		{
			name: "10,000 tools", mode: testserver.ModeManyTools,
			wantIs:  mcpclient.ErrTooManyTools,
			wantErr: `mcpclient: server "s": tools/list: too many tools: the server offers more than the limit of 1000`,
			within:  10 * time.Second,
		},
		{
			name: "one message over the frame limit", mode: testserver.ModeHugeFrame,
			wantIs:  mcpclient.ErrResponseTooLarge,
			wantErr: `mcpclient: server "s": tools/list: response too large: a message exceeded 4194304 bytes`,
			within:  5 * time.Second,
		},
		{
			name: "pages over the total limit", mode: testserver.ModeHugeDescription,
			limits:  mcpclient.Limits{MaxListBytes: 1 << 20, TerminateTimeout: 200 * time.Millisecond},
			wantIs:  mcpclient.ErrResponseTooLarge,
			wantErr: `mcpclient: server "s": tools/list: response too large: tools/list pages exceeded 1048576 bytes in total`,
			within:  5 * time.Second,
		},
		{
			name: "tools is not an array", mode: testserver.ModeRaw,
			env:     map[string]string{testserver.EnvResult: `{"tools":{}}`},
			wantIs:  mcpclient.ErrMalformedResponse,
			wantErr: `mcpclient: server "s": tools/list: malformed response: page 1: "tools" is an object; want an array`,
			within:  5 * time.Second,
		},
		{
			name: "result is not an object", mode: testserver.ModeRaw,
			env:     map[string]string{testserver.EnvResult: `[1,2]`},
			wantIs:  mcpclient.ErrMalformedResponse,
			wantErr: `mcpclient: server "s": tools/list: malformed response: page 1: the result: the result must be a JSON object`,
			within:  5 * time.Second,
		},
		{
			name: "cursor loop", mode: testserver.ModeRaw,
			env:     map[string]string{testserver.EnvResult: `{"tools":[],"nextCursor":"again"}`},
			wantIs:  mcpclient.ErrMalformedResponse,
			wantErr: `mcpclient: server "s": tools/list: malformed response: page 2 repeats cursor "again"`,
			within:  5 * time.Second,
		},
		{
			name: "tool without a name", mode: testserver.ModeRaw,
			env:     map[string]string{testserver.EnvResult: `{"tools":[{"inputSchema":{"type":"object"}}]}`},
			wantIs:  mcpclient.ErrMalformedResponse,
			wantErr: `mcpclient: server "s": tools/list: malformed response: tools[0]: "name" is missing, empty or not a string`,
			within:  5 * time.Second,
		},
		{
			name: "tool listed twice", mode: testserver.ModeRaw,
			env:     map[string]string{testserver.EnvResult: `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"a","inputSchema":{"type":"object"}}]}`},
			wantIs:  mcpclient.ErrMalformedResponse,
			wantErr: `mcpclient: server "s": tools/list: malformed response: tool "a" is listed twice`,
			within:  5 * time.Second,
		},
		{
			name: "JSON-RPC error", mode: testserver.ModeRaw,
			env:     map[string]string{testserver.EnvError: "database unavailable"},
			wantIs:  mcpclient.ErrServerError,
			wantErr: `mcpclient: server "s": tools/list: server returned an error: code -32603: "database unavailable"`,
			within:  5 * time.Second,
		},
		{
			name: "missing credential", mode: testserver.ModeNormal,
			env:     map[string]string{"API_TOKEN": "${API_TOKEN}"},
			wantIs:  mcpclient.ErrMissingCredential,
			wantErr: `mcpclient: server "s": credentials: missing credential: env.API_TOKEN references ${API_TOKEN}, which is not set`,
			within:  time.Second,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			decl := testDecl(t, "s", tc.mode, tc.env)
			if tc.command != "" {
				decl.Command = tc.command
			}
			limits := tc.limits
			if limits == (mcpclient.Limits{}) {
				limits = testLimits()
			}
			start := time.Now()
			r, err := mcpclient.Introspect(context.Background(), decl, testOptions(limits))
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("Introspect succeeded with %d tools; want error %q", len(r.Capabilities), tc.wantErr)
			}
			if err.Error() != tc.wantErr {
				t.Errorf("error\n got %s\nwant %s", err, tc.wantErr)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(err, %v) = false", tc.wantIs)
			}
			var se *mcpclient.ServerError
			if !errors.As(err, &se) || se.ServerID != "s" {
				t.Errorf("error is not a *ServerError for server s: %#v", err)
			}
			// within bounds a hang, with room for the race detector on a
			// busy machine; it is not a performance figure.
			if elapsed > 3*tc.within {
				t.Errorf("took %v; want at most %v", elapsed, 3*tc.within)
			}
			assertGone(t, decl)
			if tc.pidFile != "" {
				data, err := os.ReadFile(tc.pidFile)
				if err != nil {
					t.Fatal(err)
				}
				fields := strings.Fields(string(data))
				if len(fields) != 2 {
					t.Fatalf("pid file = %q; want the server's and its child's pid", data)
				}
				for _, f := range fields {
					pid, _ := strconv.Atoi(f)
					waitDead(t, pid)
				}
			}
		})
	}
}

// waitDead fails unless pid is gone (or a zombie) within a few seconds.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if processGone(pid) {
			return
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d is still running", pid)
}

func TestIntrospectToolProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mode string
		env  map[string]string
		want map[string][]capability.Problem // tools with problems; others must have none
		// wantErr holds the exact Capability.Err() text of some tools.
		wantErr map[string]string
	}{
		{
			name: "malformed schemas", mode: testserver.ModeMalformedSchema,
			want: map[string][]capability.Problem{
				"bad_minimum":  {{Code: capability.ProblemInvalidSchema, Field: "inputSchema", Message: `does not compile: "urn:skillgate:tool-schema#" is not valid against metaschema: jsonschema validation failed with 'https://json-schema.org/draft/2020-12/schema#' - at '': 'allOf' failed - at '/properties/n': 'allOf' failed - at '/properties/n/minimum': got string, want number`}},
				"bad_output":   {{Code: capability.ProblemInvalidSchema, Field: "outputSchema", Message: `does not compile: "urn:skillgate:tool-schema#" is not valid against metaschema: jsonschema validation failed with 'https://json-schema.org/draft/2020-12/schema#' - at '': 'allOf' failed - at '/properties/n': 'allOf' failed - at '/properties/n/type': 'anyOf' failed - at '/properties/n/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' - at '/properties/n/type': got string, want array`}},
				"dangling_ref": {{Code: capability.ProblemInvalidSchema, Field: "inputSchema", Message: `does not compile: json-pointer in "urn:skillgate:tool-schema#/$defs/missing" not found`}},
				"file_ref":     {{Code: capability.ProblemInvalidSchema, Field: "inputSchema", Message: `does not compile: failing loading "file:///etc/passwd": external reference "file:///etc/passwd" is not allowed; a tool schema must be self-contained`}},
			},
		},
		{
			name: "megabyte description", mode: testserver.ModeHugeDescription,
			want: map[string][]capability.Problem{
				"huge": {{Code: capability.ProblemTooLarge, Field: "description", Message: "is 1048576 bytes; the limit is 32768"}},
			},
			wantErr: map[string]string{
				"huge": `mcpclient: server "s": tool "huge": tool definition too large: description: is 1048576 bytes; the limit is 32768`,
			},
		},
		{
			name: "hostile definitions", mode: testserver.ModeRaw,
			env: map[string]string{testserver.EnvResult: `{"tools":[` +
				`{"name":"dup","description":"benign","description":"poisoned","inputSchema":{"type":"object"}},` +
				`{"name":"bad name!","inputSchema":{"type":"object"}},` +
				`{"name":"no_schema"},` +
				`{"name":"string_schema","inputSchema":{"type":"string"}},` +
				`{"name":"typed_wrong","title":7,"inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}},` +
				`{"name":"bad_meta","inputSchema":{"type":"object"},"_meta":{"io.skillgate/risk":{"riskLevel":"harmless","scope":"x"}}},` +
				`{"name":"huge_number","inputSchema":{"type":"object","maximum":1e400}},` +
				`{"name":"deep_schema","inputSchema":{"type":"object","properties":{"a":` + strings.Repeat(`{"items":`, 100) + `{}` + strings.Repeat(`}`, 100) + `}}}` +
				`]}`},
			want: map[string][]capability.Problem{
				"dup":           {{Code: capability.ProblemInvalidTool, Field: "tool", Message: `duplicate key "description"`}},
				"bad name!":     {{Code: capability.ProblemInvalidTool, Field: "name", Message: `"bad name!" breaks the MCP naming rule: 1 to 128 of A-Z a-z 0-9 _ . -`}},
				"no_schema":     {{Code: capability.ProblemInvalidSchema, Field: "inputSchema", Message: "is missing"}},
				"string_schema": {{Code: capability.ProblemInvalidSchema, Field: "inputSchema", Message: `must have "type": "object"`}},
				"typed_wrong": {
					{Code: capability.ProblemInvalidTool, Field: "title", Message: "is a number; want a string"},
					{Code: capability.ProblemInvalidTool, Field: "annotations.readOnlyHint", Message: "is a string; want a boolean"},
				},
				"bad_meta": {
					{Code: capability.ProblemInvalidTool, Field: `_meta["io.skillgate/risk"].riskLevel`, Message: `"harmless" is not one of read, write, destructive`},
					{Code: capability.ProblemInvalidTool, Field: `_meta["io.skillgate/risk"].scope`, Message: "unknown field; the entry has riskLevel, sideEffects and dataEgress"},
				},
				"huge_number": {{Code: capability.ProblemInvalidTool, Field: "definition", Message: `cannot be pinned: not canonical JSON: Number out of range: "1e400"`}},
				"deep_schema": {{Code: capability.ProblemTooLarge, Field: "inputSchema", Message: "nests 103 levels deep; the limit is 64"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			decl := testDecl(t, "s", tc.mode, tc.env)
			r, err := mcpclient.Introspect(context.Background(), decl, testOptions(testLimits()))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range r.Capabilities {
				want := tc.want[c.CapabilityID]
				if !reflect.DeepEqual(c.Problems, want) {
					gotJSON, _ := json.MarshalIndent(c.Problems, "", " ")
					t.Errorf("%s: problems\n got %s\nwant %+v", c.CapabilityID, gotJSON, want)
				}
				err := c.Err()
				if (err == nil) != (len(want) == 0) {
					t.Errorf("%s: Err() = %v", c.CapabilityID, err)
				}
				for _, p := range want {
					if !errors.Is(err, sentinelOf(p.Code)) {
						t.Errorf("%s: Err() does not wrap the sentinel of %s", c.CapabilityID, p.Code)
					}
				}
				if text, ok := tc.wantErr[c.CapabilityID]; ok && (err == nil || err.Error() != text) {
					t.Errorf("%s: Err()\n got %v\nwant %s", c.CapabilityID, err, text)
				}

				if _, pinned := r.Pins.Lookup(c.CapabilityID); pinned != (c.Pin != "") {
					t.Errorf("%s: pinned=%v but Pin=%q", c.CapabilityID, pinned, c.Pin)
				}
			}
			for name := range tc.want {
				if _, ok := r.Capability(name); !ok {
					t.Errorf("tool %q missing from the report", name)
				}
			}
			assertGone(t, decl)
		})
	}
}

// sentinelOf is the documented sentinel of a problem code.
func sentinelOf(code capability.ProblemCode) error {
	switch code {
	case capability.ProblemInvalidSchema:
		return mcpclient.ErrInvalidSchema
	case capability.ProblemTooLarge:
		return mcpclient.ErrToolTooLarge
	}
	return mcpclient.ErrInvalidTool
}
