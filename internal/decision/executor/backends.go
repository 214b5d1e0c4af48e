package executor

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// MaxExpression bounds one mapping expression's source, in bytes.
const MaxExpression = 4096

// BackendsFile is a parsed backends file: the provider a skill serves and,
// per executor, the tool that runs it and how its arguments are written.
// Nothing is compiled yet: the tools' schemas are known only once the
// skill's servers are introspected ([BackendsFile.Compile]).
type BackendsFile struct {
	// File is the name errors carry.
	File string
	// Provider is the provider every backend of the file belongs to.
	Provider string
	// Backends are the declarations, in file order.
	Backends []BackendDecl
}

// BackendDecl is one backend as declared.
type BackendDecl struct {
	// Executor is the executor's name in the catalog.
	Executor string `json:"executor"`
	// Server is a key of the skill's mcp.json, Tool one of its tools.
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Arguments maps each tool argument to a CEL expression over args,
	// the executor's canonical arguments.
	Arguments map[string]string `json:"arguments"`
	// Result, optional, is a CEL expression over result (the tool's
	// result) yielding the text the agent gets.
	Result string `json:"result,omitempty"`
}

type backendsFile struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Provider   string         `yaml:"provider"`
	Backends   []backendEntry `yaml:"backends"`
}

type backendEntry struct {
	Executor  string            `yaml:"executor"`
	Server    string            `yaml:"server"`
	Tool      string            `yaml:"tool"`
	Arguments map[string]string `yaml:"arguments"`
	// Result, optional, maps the tool's result to the executor's.
	Result string `yaml:"result"`
}

// ParseBackends parses a provider skill's backends file against the
// catalog: the provider must be one of the catalog's, every executor one
// of its executors, declared once; every backend names a server and a
// tool and maps at least one argument. Errors wrap [ErrInvalidBackends]
// and name the file, the backend and the field.
func ParseBackends(file string, data []byte, cat *Catalog) (*BackendsFile, error) {
	var f backendsFile
	if err := decodeYAML(file, data, &f, ErrInvalidBackends); err != nil {
		return nil, err
	}
	if err := checkHeader(file, f.APIVersion, f.Kind, KindBackends, ErrInvalidBackends); err != nil {
		return nil, err
	}
	if _, ok := cat.Provider(f.Provider); !ok {
		return nil, fmt.Errorf("%w: %s: provider %q is not a known provider; use one of %s (or declare it in an executor catalog)", ErrInvalidBackends, file, f.Provider, providerList(cat))
	}
	if len(f.Backends) == 0 {
		return nil, fmt.Errorf("%w: %s: no backends: list at least one under backends:", ErrInvalidBackends, file)
	}
	if len(f.Backends) > MaxEntries {
		return nil, fmt.Errorf("%w: %s: %d backends, limit %d", ErrInvalidBackends, file, len(f.Backends), MaxEntries)
	}
	out := &BackendsFile{File: file, Provider: f.Provider}
	seen := map[string]int{}
	for i, b := range f.Backends {
		at := fmt.Sprintf("%s: backends[%d]", file, i)
		if cat.Lookup(b.Executor) == nil {
			hint := ""
			if base, prov, ok := cat.SplitProvider(b.Executor); ok && cat.Lookup(base) != nil {
				hint = fmt.Sprintf(" (it carries provider %q's suffix: write executor: %s; the provider is the file's)", prov, base)
			} else if _, _, err := ParseName(b.Executor); err != nil {
				hint = " (" + err.Error() + ")"
			}
			return nil, fmt.Errorf("%w: %s: executor %q is not in the catalog (executors: %s)%s", ErrInvalidBackends, at, b.Executor, executorList(cat), hint)
		}
		at += " (" + b.Executor + ")"
		if j, dup := seen[b.Executor]; dup {
			return nil, fmt.Errorf("%w: %s: executor %s already has a backend at backends[%d]; a provider skill serves an executor once", ErrInvalidBackends, at, b.Executor, j)
		}
		seen[b.Executor] = i
		switch {
		case b.Server == "" || len(b.Server) > 128 || strings.ContainsAny(b.Server, "/:"):
			return nil, fmt.Errorf("%w: %s: server %q: write the key of the server in mcp.json", ErrInvalidBackends, at, b.Server)
		case b.Tool == "" || len(b.Tool) > 128:
			return nil, fmt.Errorf("%w: %s: tool %q: write the name of the server's tool", ErrInvalidBackends, at, b.Tool)
		case len(b.Arguments) == 0:
			return nil, fmt.Errorf("%w: %s: arguments: map each argument of tool %s to a CEL expression over args", ErrInvalidBackends, at, b.Tool)
		}
		for k, v := range b.Arguments {
			if len(v) > MaxExpression || strings.TrimSpace(v) == "" {
				return nil, fmt.Errorf("%w: %s: arguments.%s: a CEL expression of 1 to %d bytes", ErrInvalidBackends, at, k, MaxExpression)
			}
		}
		out.Backends = append(out.Backends, BackendDecl{Executor: b.Executor, Server: b.Server, Tool: b.Tool, Arguments: b.Arguments, Result: b.Result})
	}
	return out, nil
}

// Backend is a compiled backend: one executor served by one tool of one
// server of one provider skill, with its mapping. It is immutable.
type Backend struct {
	// Skill is the provider skill's key, Provider its provider.
	Skill    string
	Provider string
	// Executor is the executor served.
	Executor *Executor
	// Server is the key in the skill's mcp.json, Tool the tool name.
	Server, Tool string
	// Mapping writes the tool's arguments.
	Mapping *Mapping
	// Result, when the backend declares one, maps the tool's result to the
	// text the agent gets; nil passes the result on as the tool sent it.
	Result *ResultMapping
}

// Ref is the backend's capability: the skill, server and tool it calls.
func (b *Backend) Ref() capability.Ref {
	return capability.Ref{Skill: b.Skill, ExtensionID: b.Server, CapabilityID: b.Tool}
}

// Compile compiles every backend of the file for skill: its server must
// be a key of the skill's mcp.json (servers), its tool one the server
// offers (tools, as introspected or pinned), and every mapping must
// type-check against that tool's input schema ([CompileMapping]). All
// problems are returned, joined; the backends compiled are returned only
// when there is none.
func (f *BackendsFile) Compile(cat *Catalog, skill string, servers []string, tools []capability.Tool) ([]*Backend, error) {
	byTool := map[string]capability.Tool{}
	offered := map[string][]string{}
	for _, t := range tools {
		byTool[t.Name()] = t
		offered[t.ExtensionID] = append(offered[t.ExtensionID], t.CapabilityID)
	}
	var out []*Backend
	var errs []error
	comp := NewCompiler()
	for i, d := range f.Backends {
		at := fmt.Sprintf("%s: backends[%d] (%s)", f.File, i, d.Executor)
		ex := cat.Lookup(d.Executor)
		if ex == nil {
			errs = append(errs, fmt.Errorf("%w: %s: executor %q is not in the catalog (executors: %s)", ErrInvalidBackends, at, d.Executor, executorList(cat)))
			continue
		}
		if !slices.Contains(servers, d.Server) {
			s := slices.Sorted(slices.Values(servers))
			errs = append(errs, fmt.Errorf("%w: %s: server %q is not a key of mcp.json (servers: %s)", ErrInvalidBackends, at, d.Server, listOrNone(s)))
			continue
		}
		t, ok := byTool[d.Server+"/"+d.Tool]
		if !ok {
			o := slices.Sorted(slices.Values(offered[d.Server]))
			errs = append(errs, fmt.Errorf("%w: %s: server %s offers no tool %q (its tools: %s)", ErrInvalidBackends, at, d.Server, d.Tool, listOrNone(o)))
			continue
		}
		m, err := comp.CompileMapping(ex, t, d.Arguments)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		var rm *ResultMapping
		if d.Result != "" {
			if rm, err = CompileResult(d.Result); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
				continue
			}
		}
		out = append(out, &Backend{Skill: skill, Provider: f.Provider, Executor: ex, Server: d.Server, Tool: d.Tool, Mapping: m, Result: rm})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func providerList(c *Catalog) string {
	s := make([]string, len(c.Providers))
	for i, p := range c.Providers {
		s[i] = p.Name
	}
	return listOrNone(s)
}

func executorList(c *Catalog) string {
	s := make([]string, len(c.Executors))
	for i, e := range c.Executors {
		s[i] = e.Name
	}
	return listOrNone(s)
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > 20 {
		return strings.Join(s[:20], ", ") + fmt.Sprintf(" and %d more", len(s)-20)
	}
	return strings.Join(s, ", ")
}
