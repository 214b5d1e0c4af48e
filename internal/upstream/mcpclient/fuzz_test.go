package mcpclient_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

var fuzzServerID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// FuzzParseConfig feeds hostile mcp.json documents to ParseConfig. The seed
// corpus is in testdata/fuzz/FuzzParseConfig. Properties: it never panics;
// an error wraps ErrInvalidConfig and stays short whatever the input; a
// success satisfies every documented invariant.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["1"],"env":{"K":"${V}"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := mcpclient.ParseConfig(data)
		if err != nil {
			if !errors.Is(err, mcpclient.ErrInvalidConfig) {
				t.Fatalf("error does not wrap ErrInvalidConfig: %v", err)
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("error message is %d bytes", len(err.Error()))
			}
			return
		}
		if len(cfg.Servers) > mcpclient.MaxServers {
			t.Fatalf("%d servers", len(cfg.Servers))
		}
		if !sort.SliceIsSorted(cfg.Servers, func(i, j int) bool { return cfg.Servers[i].ID < cfg.Servers[j].ID }) {
			t.Fatal("servers not sorted")
		}
		seen := map[string]bool{}
		for _, d := range cfg.Servers {
			if !fuzzServerID.MatchString(d.ID) || seen[strings.ToLower(d.ID)] {
				t.Fatalf("bad or duplicate id %q", d.ID)
			}
			seen[strings.ToLower(d.ID)] = true
			switch d.Transport {
			case capability.TransportStdio:
				if d.Command == "" || d.URL != "" || d.Headers != nil || len(d.Args) > mcpclient.MaxArgs || len(d.Env) > mcpclient.MaxEnv {
					t.Fatalf("bad stdio declaration %v", d)
				}
			case capability.TransportHTTP:
				if d.URL == "" || d.Command != "" || d.Args != nil || d.Env != nil || len(d.Headers) > mcpclient.MaxHeaders {
					t.Fatalf("bad http declaration %v", d)
				}
			default:
				t.Fatalf("transport %q", d.Transport)
			}
			r := d.Redacted()
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			// Every literal env or header value is redacted.
			for k, v := range r.Env {
				if strings.Contains(v, "[redacted]") || strings.HasPrefix(v, "${") || v == "" {
					continue
				}
				t.Fatalf("env %s not redacted: %q in %s", k, v, b)
			}
			if !sort.StringsAreSorted(r.Credentials) {
				t.Fatal("credentials not sorted")
			}
		}
	})
}

// FuzzToolDefinition feeds hostile tool definitions to DeriveRisk and
// NewToolPin. Properties: no panic; a pinnable definition verifies, pins
// identically twice, and shows no drift against itself.
func FuzzToolDefinition(f *testing.F) {
	f.Add([]byte(`{"name":"t","annotations":{"readOnlyHint":true}}`))
	server := capability.ServerIdentity{Name: "s", Version: "1"}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _ := mcpclient.DeriveRisk(data)
		for _, f := range m.Unknown() {
			if f != "riskLevel" && f != "sideEffects" && f != "dataEgress" {
				t.Fatalf("unknown field name %q", f)
			}
		}
		if m.RiskLevel.Known() && !m.RiskLevel.Value.Valid() {
			t.Fatalf("invalid risk level %q", m.RiskLevel.Value)
		}
		pin, err := capability.NewToolPin(server, data)
		if err != nil {
			if !errors.Is(err, mcpclient.ErrInvalidTool) {
				t.Fatalf("error does not wrap ErrInvalidTool: %v", err)
			}
			return
		}
		again, err := capability.NewToolPin(server, pin.Definition)
		if err != nil || again.Name != pin.Name || again.Digest != pin.Digest || string(again.Definition) != string(pin.Definition) {
			t.Fatalf("re-pinning the canonical definition differs: %v", err)
		}
		set := capability.PinSet{Server: server, Tools: []capability.ToolPin{pin}}
		if err := set.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if d := capability.Diff(set, set); !d.Empty() {
			t.Fatalf("drift against itself: %v", d)
		}
	})
}
