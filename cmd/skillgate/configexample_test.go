package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/app"
)

// exampleConfig is the example of every configuration key.
var exampleConfig = filepath.Join("..", "..", "examples", "config.yaml")

// configKeys lists the key paths a type accepts in config.yaml
// ("roots[].trust"); a map's keys are the user's, so a map field is one
// path.
func configKeys(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || key == "-" {
				continue
			}
			if key == "" {
				key = strings.ToLower(f.Name)
			}
			p := key
			if prefix != "" {
				p = prefix + "." + key
			}
			configKeys(f.Type, p, out)
		}
	case reflect.Slice:
		configKeys(t.Elem(), prefix+"[]", out)
	default:
		*out = append(*out, prefix)
	}
}

// yamlKeys lists the key paths a YAML document sets, as configKeys
// writes them, and every prefix of them.
func yamlKeys(n *yaml.Node, prefix string, out map[string]bool) {
	out[prefix] = true
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			yamlKeys(c, prefix, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if prefix != "" {
				p = prefix + "." + p
			}
			yamlKeys(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			yamlKeys(c, prefix+"[]", out)
		}
	}
}

// TestExampleConfigHasEveryKey: examples/config.yaml sets every key the
// configuration accepts (app.Config and what it holds), so that it
// documents each; a key added to the struct fails here until the example
// shows it.
func TestExampleConfigHasEveryKey(t *testing.T) {
	var want []string
	configKeys(reflect.TypeOf(app.Config{}), "", &want)
	b, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	yamlKeys(&doc, "", have)
	var missing []string
	for _, k := range want {
		if !have[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("examples/config.yaml does not show %s: add each with a comment saying what it does", strings.Join(missing, ", "))
	}
	if len(want) < 50 {
		t.Errorf("only %d keys found in app.Config: %v", len(want), want)
	}
}

// TestConfigCheck: config check's verdicts on the example of every key, a
// file with problems (all of them, on stderr, exit 1), a missing --config
// file and no file at all, in text and JSON.
func TestConfigCheck(t *testing.T) {
	data := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("limits:\n  max_dpeth: 3\nsessions:\n  idle_expiry: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	shape := filepath.Join(t.TempDir(), "shape.yaml")
	if err := os.WriteFile(shape, []byte("sessions:\n  idle_expiry: soon\nroots:\n  - path: /x\n    trust: high\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(data, "none.yaml")
	tests := []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"example", []string{"config", "check", "--config", exampleConfig}, 0, "config " + exampleConfig + ": valid\n", ""},
		{"example as JSON", []string{"config", "check", "--config", exampleConfig, "--json"}, 0,
			"{\n  \"path\": \"" + exampleConfig + "\",\n  \"found\": true,\n  \"valid\": true,\n  \"problems\": []\n}\n", ""},
		{"unknown key", []string{"config", "check", "--config", bad}, 1, "",
			"config " + bad + ":2: unknown key limits.max_dpeth (did you mean max_depth?); valid keys under limits: max_depth, max_dirs\n"},
		{"values", []string{"config", "check", "--config", shape}, 1, "",
			"config " + shape + `: sessions.idle_expiry: "soon" is not a positive duration like 90m, 12h or 30d (0 or never keeps sessions; the default is 1d)` + "\n" +
				"config " + shape + `: roots[0].trust: trust "high": use first_party or imported` + "\n"},
		{"values as JSON", []string{"config", "check", "--config", shape, "--json"}, 1,
			"{\n  \"path\": \"" + shape + "\",\n  \"found\": true,\n  \"valid\": false,\n  \"problems\": [\n" +
				"    \"config " + shape + `: sessions.idle_expiry: \"soon\" is not a positive duration like 90m, 12h or 30d (0 or never keeps sessions; the default is 1d)",` + "\n" +
				"    \"config " + shape + `: roots[0].trust: trust \"high\": use first_party or imported"` + "\n  ]\n}\n", ""},
		{"missing file", []string{"config", "check", "--config", missing}, 1, "", "config: open " + missing + ": no such file or directory\n"},
		{"no file", []string{"config", "check"}, 0, "no configuration file: " + filepath.Join(data, "config.yaml") + " does not exist; skillgate runs with its defaults (examples/config.yaml shows every key)\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, data, tc.args...)
			if code != tc.code || out != tc.out || errs != tc.errs {
				t.Errorf("%d\n got %q %q\nwant %q %q", code, out, errs, tc.out, tc.errs)
			}
		})
	}
}
