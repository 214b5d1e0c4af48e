package main

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// decodeConfig decodes a configuration file's bytes into c. Unknown keys
// and values of the wrong kind are reported with the file, the line, the
// key's path and what is accepted there (the closest valid key for a
// misspelt one), never as Go types.
func decodeConfig(file string, b []byte, c *Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			return fmt.Errorf("config %s:%s: %s (YAML syntax)", file, m[1], m[2])
		}
		return fmt.Errorf("config %s: %s (YAML syntax)", file, msg)
	}
	if len(doc.Content) == 0 { // empty file
		return nil
	}
	var problems []string
	checkNode(doc.Content[0], reflect.TypeOf(c).Elem(), "", &problems)
	if len(problems) > 0 {
		for i, p := range problems {
			problems[i] = "config " + file + ":" + p
		}
		return errors.New(strings.Join(problems, "\n"))
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// validateConfig checks the values of a decoded configuration that its
// shape does not: durations, scopes, trust levels, modes, providers and
// the signing keys. [Main.config], the one loader every command uses,
// runs it, so a mistake fails the first command that reads the file
// (scan as much as serve), not the one that first uses the value. Each
// problem names the file, the field and what to write instead; all of them
// are reported at once.
func (m *Main) validateConfig(file string, c *Config) error {
	var problems []string
	add := func(field string, err error) {
		problems = append(problems, fmt.Sprintf("config %s: %s: %v", file, field, err))
	}
	if _, err := c.idleExpiry(); err != nil {
		add("sessions.idle_expiry", err)
	}
	for i, r := range c.Roots {
		if r.Scope != "" {
			if _, err := discover.ParseScope(r.Scope); err != nil {
				add(fmt.Sprintf("roots[%d].scope", i), err)
			}
		}
		if r.Trust != "" {
			if _, err := capability.ParseTrust(r.Trust); err != nil {
				add(fmt.Sprintf("roots[%d].trust", i), err)
			}
		}
		switch r.HardLinks {
		case "", "refuse", "allow":
		default:
			add(fmt.Sprintf("roots[%d].hard_links", i), fmt.Errorf("%q: use allow or refuse", r.HardLinks))
		}
	}
	keys := make([]string, 0, len(c.Sandbox.Skills))
	for k := range c.Sandbox.Skills {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := sandbox.ParseMode(c.Sandbox.Skills[k]); err != nil {
			add("sandbox.skills."+k, err)
		}
	}
	if _, err := executorOptions(c); err != nil {
		add("executors", err)
	}
	if _, err := c.Packages.options(""); err != nil {
		add("packages", err)
	}
	if err := credential.CheckFromEnvironment("credentials.from_environment", c.Credentials.FromEnvironment); err != nil {
		problems = append(problems, fmt.Sprintf("config %s: %v", file, err))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	if _, err := m.keyring(c); err != nil { // its errors name the file and the key
		return err
	}
	return nil
}

// yamlLine splits the YAML library's "line N: problem".
var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// checkNode compares n with the Go type t it decodes into, appending a
// "LINE: problem" for each unknown key and each value of the wrong kind.
func checkNode(n *yaml.Node, t reflect.Type, path string, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	at := func(format string, args ...any) {
		*problems = append(*problems, strconv.Itoa(n.Line)+": "+fmt.Sprintf(format, args...))
	}
	name := path
	if name == "" {
		name = "the top level"
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			at("%s must be a mapping of keys (%s), not %s", name, strings.Join(yamlKeys(t), ", "), describeNode(n))
			return
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			if k := yamlKey(t.Field(i)); k != "" {
				fields[k] = t.Field(i).Type
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				valid := yamlKeys(t)
				hint := ""
				if s := policy.Suggest(k.Value, valid); s != "" {
					hint = fmt.Sprintf(" (did you mean %s?)", s)
				}
				*problems = append(*problems, fmt.Sprintf("%d: unknown key %s%s; valid keys %s: %s",
					k.Line, join(path, k.Value), hint, under(path), strings.Join(valid, ", ")))
				continue
			}
			checkNode(v, ft, join(path, k.Value), problems)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			at("%s must be a list, not %s", name, describeNode(n))
			return
		}
		for i, e := range n.Content {
			checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			at("%s must be a whole number, not %s", name, describeNode(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			at("%s must be true or false, not %s", name, describeNode(n))
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			at("%s must be a single value, not %s", name, describeNode(n))
		}
	}
}

// describeNode names what a YAML node holds, for messages.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// yamlKey is the key of a struct field in YAML, or "" when it has none.
func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch tag {
	case "-":
		return ""
	case "":
		return strings.ToLower(f.Name)
	}
	return tag
}

// yamlKeys lists the keys a struct type accepts, sorted.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func under(path string) string {
	if path == "" {
		return "at the top level"
	}
	return "under " + path
}
