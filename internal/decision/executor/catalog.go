package executor

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// APIVersion is the version every executor catalog and backends file
// declares in its apiVersion field. A later incompatible format gets a new
// version; this package refuses versions it does not know.
const APIVersion = "skillgate.dev/v1"

// The kinds of file, each with its JSON Schema in docs/schemas.
const (
	// KindCatalog is an executor catalog: providers and executors
	// (docs/schemas/executor-catalog.v1.json).
	KindCatalog = "ExecutorCatalog"
	// KindBackends is a provider skill's backends file, backends.yaml
	// beside its SKILL.md and mcp.json (docs/schemas/backends.v1.json).
	KindBackends = "Backends"
)

// BackendsFileName is the name of a provider skill's backends file.
const BackendsFileName = "backends.yaml"

// Limits on files from outside.
const (
	// MaxFileBytes bounds a catalog or backends file.
	MaxFileBytes = 512 << 10
	// MaxEntries bounds the executors of a catalog and the backends of a
	// backends file.
	MaxEntries = 4096
	// MaxDescription bounds an executor's description, in bytes.
	MaxDescription = 2048
)

// ProviderArg is the name of the optional argument skillgate adds to every
// executor's input schema: an enum of the providers live for the caller,
// the explicit pin ("open the issue on gitlab"). An executor's own schema
// may not declare it.
const ProviderArg = "provider"

// AccountArg is the name of the optional argument that pins the account of
// the principal's connection a call uses ("the work account"), when the
// backend's server is a remote one reached through a connection. Like
// [ProviderArg], an executor's own schema may not declare it.
const AccountArg = "account"

// Provider is one provider of the naming authority: the service behind
// backends, and the suffix its provider-specific tool names carry.
type Provider struct {
	// Name is the provider's name: lowercase words joined by '-'
	// ("github", "google-workspace").
	Name string `json:"name"`
	// Suffix is what provider-specific tool names end with ("_github").
	Suffix string `json:"suffix"`
	// Description says what the provider is, for operators.
	Description string `json:"description,omitempty"`
}

// Executor is a provider-neutral capability: what an agent calls.
type Executor struct {
	// Name is verb_object ([ParseName]); Verb and Object are its parts.
	Name   string `json:"name"`
	Verb   Verb   `json:"verb"`
	Object string `json:"object"`
	// Description is what agents read.
	Description string `json:"description"`
	// InputSchema is the canonical arguments' JSON Schema, as compact JSON
	// (without the provider argument skillgate adds).
	InputSchema json.RawMessage `json:"inputSchema"`

	schema *jsonschema.Schema
	shape  objectShape
}

// Validate checks canonical arguments against the executor's schema (the
// provider argument removed first by the caller).
func (e *Executor) Validate(args map[string]any) error { return e.schema.Validate(args) }

// Catalog is a parsed executor catalog: the naming authority's providers
// and the executors, each sorted by name. It is immutable and safe for
// concurrent use.
type Catalog struct {
	Providers []Provider
	Executors []*Executor

	byName     map[string]*Executor
	byProvider map[string]Provider
	// from names the file that declared each executor ("executor:NAME")
	// and provider ("provider:NAME"), for the errors of [Catalog.Merge].
	from map[string]string
}

// Lookup returns the executor named name, or nil.
func (c *Catalog) Lookup(name string) *Executor { return c.byName[name] }

// Provider returns the provider named name.
func (c *Catalog) Provider(name string) (Provider, bool) {
	p, ok := c.byProvider[name]
	return p, ok
}

// SplitProvider recognises a provider-suffixed tool name: for
// "create_issue_github" it returns ("create_issue", "github", true). It
// reports false when the name carries no known provider's suffix.
func (c *Catalog) SplitProvider(tool string) (base, provider string, ok bool) {
	for _, p := range c.Providers {
		if b, found := strings.CutSuffix(tool, p.Suffix); found && b != "" {
			return b, p.Name, true
		}
	}
	return "", "", false
}

var (
	providerName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	suffixForm   = regexp.MustCompile(`^_[a-z][a-z0-9]*$`)
	argName      = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// ValidArgName reports whether name may name an executor argument:
// lowercase letters, digits and '_', starting with a letter, at most 64
// bytes.
func ValidArgName(name string) bool { return len(name) <= 64 && argName.MatchString(name) }

// catalogFile is the catalog as written.
type catalogFile struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Providers  []catalogProvider `yaml:"providers"`
	Executors  []catalogExecutor `yaml:"executors"`
}

type catalogProvider struct {
	Name        string `yaml:"name"`
	Suffix      string `yaml:"suffix"`
	Description string `yaml:"description"`
}

type catalogExecutor struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	InputSchema map[string]any `yaml:"inputSchema"`
}

// decodeYAML reads one YAML document of a file from outside: bounded,
// valid UTF-8 without NUL, every key known, no key twice.
func decodeYAML(file string, data []byte, v any, sentinel error) error {
	switch {
	case len(data) > MaxFileBytes:
		return fmt.Errorf("%w: %s: %d bytes, limit %d", sentinel, file, len(data), MaxFileBytes)
	case !utf8.Valid(data):
		return fmt.Errorf("%w: %s: not valid UTF-8", sentinel, file)
	case bytes.IndexByte(data, 0) >= 0:
		return fmt.Errorf("%w: %s: contains a NUL byte", sentinel, file)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: %s: the file is empty; it must begin with apiVersion: %s", sentinel, file, APIVersion)
		}
		return fmt.Errorf("%w: %s: %s", sentinel, file, oneLine(err.Error()))
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %s: more than one YAML document; keep one", sentinel, file)
	}
	return nil
}

// checkHeader checks apiVersion and kind.
func checkHeader(file, apiVersion, kind, want string, sentinel error) error {
	if apiVersion != APIVersion {
		return fmt.Errorf("%w: %s: apiVersion %q: write apiVersion: %s", sentinel, file, apiVersion, APIVersion)
	}
	if kind != want {
		return fmt.Errorf("%w: %s: kind %q: write kind: %s", sentinel, file, kind, want)
	}
	return nil
}

// ParseCatalog parses an executor catalog file (YAML, or JSON, which is
// YAML). file names it in errors. Every executor name must be verb_object
// from the vocabulary, every input schema a JSON Schema object that
// compiles and does not declare the provider argument. Errors wrap
// [ErrInvalidCatalog] (or [ErrInvalidName]) and name the entry and field.
func ParseCatalog(file string, data []byte) (*Catalog, error) {
	var f catalogFile
	if err := decodeYAML(file, data, &f, ErrInvalidCatalog); err != nil {
		return nil, err
	}
	if err := checkHeader(file, f.APIVersion, f.Kind, KindCatalog, ErrInvalidCatalog); err != nil {
		return nil, err
	}
	if len(f.Executors)+len(f.Providers) > MaxEntries {
		return nil, fmt.Errorf("%w: %s: %d entries, limit %d", ErrInvalidCatalog, file, len(f.Executors)+len(f.Providers), MaxEntries)
	}
	c := &Catalog{byName: map[string]*Executor{}, byProvider: map[string]Provider{}, from: map[string]string{}}
	suffixes := map[string]string{}
	for i, p := range f.Providers {
		at := fmt.Sprintf("%s: providers[%d]", file, i)
		switch {
		case !providerName.MatchString(p.Name) || len(p.Name) > 64:
			return nil, fmt.Errorf("%w: %s: name %q: lowercase words of letters and digits joined by '-', like google-workspace", ErrInvalidCatalog, at, p.Name)
		case !suffixForm.MatchString(p.Suffix) || len(p.Suffix) > 32:
			return nil, fmt.Errorf("%w: %s (%s): suffix %q: '_' then lowercase letters and digits, like _github", ErrInvalidCatalog, at, p.Name, p.Suffix)
		}
		if _, dup := c.byProvider[p.Name]; dup {
			return nil, fmt.Errorf("%w: %s: provider %q is declared twice; keep one", ErrInvalidCatalog, at, p.Name)
		}
		if other, dup := suffixes[p.Suffix]; dup {
			return nil, fmt.Errorf("%w: %s (%s): suffix %q is already provider %q's; choose another", ErrInvalidCatalog, at, p.Name, p.Suffix, other)
		}
		suffixes[p.Suffix] = p.Name
		pr := Provider{Name: p.Name, Suffix: p.Suffix, Description: p.Description}
		c.byProvider[p.Name] = pr
		c.Providers = append(c.Providers, pr)
		c.from[OriginProvider+":"+p.Name] = file
	}
	for i, x := range f.Executors {
		at := fmt.Sprintf("%s: executors[%d]", file, i)
		e, err := c.parseExecutor(at, x)
		if err != nil {
			return nil, err
		}
		c.byName[x.Name] = e
		c.Executors = append(c.Executors, e)
		c.from[OriginExecutor+":"+x.Name] = file
	}
	slices.SortFunc(c.Providers, func(a, b Provider) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Executors, func(a, b *Executor) int { return strings.Compare(a.Name, b.Name) })
	return c, nil
}

// parseExecutor checks one executor entry (at names it in errors) against
// the catalog c holds so far.
func (c *Catalog) parseExecutor(at string, x catalogExecutor) (*Executor, error) {
	verb, object, err := ParseName(x.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: name: %w", at, err)
	}
	at += " (" + x.Name + ")"
	if slices.Contains(capability.ReservedNames, x.Name) {
		return nil, fmt.Errorf("%w: %s: %s is one of the gateway's own tools (%s); name the executor for its object, like read_file_contents", ErrInvalidCatalog, at, x.Name, strings.Join(capability.ReservedNames, ", "))
	}
	if _, dup := c.byName[x.Name]; dup {
		return nil, fmt.Errorf("%w: %s: declared twice; keep one", ErrInvalidCatalog, at)
	}
	if base, prov, ok := c.SplitProvider(x.Name); ok {
		return nil, fmt.Errorf("%w: %s: the name carries provider %q's suffix; an executor is provider-neutral: name it %s and declare a backend per provider", ErrInvalidCatalog, at, prov, base)
	}
	if strings.TrimSpace(x.Description) == "" || len(x.Description) > MaxDescription {
		return nil, fmt.Errorf("%w: %s: description: 1 to %d bytes saying what the executor does", ErrInvalidCatalog, at, MaxDescription)
	}
	if x.InputSchema == nil {
		return nil, fmt.Errorf("%w: %s: inputSchema is missing: write a JSON Schema object with type: object", ErrInvalidCatalog, at)
	}
	raw, err := json.Marshal(x.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: inputSchema: %s", ErrInvalidCatalog, at, oneLine(err.Error()))
	}
	shape, err := shapeOf(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: inputSchema: %v", ErrInvalidCatalog, at, err)
	}
	for name := range shape.props {
		if name == ProviderArg || name == AccountArg {
			return nil, fmt.Errorf("%w: %s: inputSchema.properties.%s: skillgate adds the %s argument itself; remove it", ErrInvalidCatalog, at, name, name)
		}
		if !ValidArgName(name) {
			return nil, fmt.Errorf("%w: %s: inputSchema.properties.%s: an argument name is lowercase letters, digits and '_', starting with a letter", ErrInvalidCatalog, at, name)
		}
	}
	for _, r := range shape.required {
		if _, ok := shape.props[r]; !ok {
			return nil, fmt.Errorf("%w: %s: inputSchema.required names %q, which is not among its properties (%s)", ErrInvalidCatalog, at, r, shape.names())
		}
	}
	schema, err := compileSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: inputSchema does not compile: %s", ErrInvalidCatalog, at, oneLine(err.Error()))
	}
	return &Executor{Name: x.Name, Verb: verb, Object: object, Description: x.Description, InputSchema: raw, schema: schema, shape: shape}, nil
}

// ExecutorDecl declares an executor outside a catalog file: what an
// applied promote_provider change registers.
type ExecutorDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// With returns a catalog holding c's providers and executors and the
// executors decls declare, each checked as a catalog file's entry (at
// names the source in errors). c is not modified.
func (c *Catalog) With(at string, decls ...ExecutorDecl) (*Catalog, error) {
	if len(decls) == 0 {
		return c, nil
	}
	out := &Catalog{Providers: c.Providers, Executors: slices.Clone(c.Executors), byName: maps.Clone(c.byName), byProvider: c.byProvider, from: maps.Clone(c.from)}
	if out.from == nil {
		out.from = map[string]string{}
	}
	for i, d := range decls {
		var schema map[string]any
		if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("%w: %s[%d] (%s): inputSchema: %s", ErrInvalidCatalog, at, i, d.Name, oneLine(err.Error()))
		}
		e, err := out.parseExecutor(fmt.Sprintf("%s[%d]", at, i), catalogExecutor{Name: d.Name, Description: d.Description, InputSchema: schema})
		if err != nil {
			return nil, err
		}
		out.byName[d.Name] = e
		out.Executors = append(out.Executors, e)
		out.from[OriginExecutor+":"+d.Name] = at
	}
	slices.SortFunc(out.Executors, func(a, b *Executor) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

//go:embed builtin.yaml
var builtinYAML []byte

// BuiltinFile is the name the built-in catalog's errors would carry.
const BuiltinFile = "executor/builtin.yaml"

var builtin = sync.OnceValue(func() *Catalog {
	c, err := ParseCatalog(BuiltinFile, builtinYAML)
	if err != nil {
		panic(err) // a test parses it; this cannot happen in a release
	}
	return c
})

// Builtin returns the catalog skillgate ships: the known providers and
// the executors of its first-party backends. It is parsed once and shared;
// callers must not modify it.
func Builtin() *Catalog { return builtin() }

// BuiltinYAML returns the built-in catalog's source, for documentation
// and `skillgate executors --catalog`.
func BuiltinYAML() []byte { return slices.Clone(builtinYAML) }

// oneLine folds a multi-line message into one line of at most 500 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		cut := 500
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
