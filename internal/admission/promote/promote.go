// Package promote finds and drafts promote_provider changes: the same
// action offered by tools of several providers' skills (npm server-github
// and server-gitlab both offer create_repository; a server offers
// find_issues_github beside another's find_issues_gitlab) merged into one
// provider-neutral executor with one backend per provider (seed 000).
//
// Everything here is deterministic and pure: detection reads tool lists,
// the drafter writes mappings only between arguments of the same name and
// type, and [Validate] checks any draft, whoever wrote it, exactly as a
// backends.yaml is checked at approval (every mapping must compile and
// type-check against the tool's schema; a backend naming a tool its skill
// does not offer is removed). Nothing is applied here: a change waits for
// a human (package change).
package promote

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Skill is what detection needs of one installed skill: its key, the
// provider of each of its servers and the tools they offer.
type Skill struct {
	Key string
	// Provider is the provider the skill declares (its backends.yaml's),
	// or "" to recognise each server's ([ProviderOf]).
	Provider string
	// Servers are the skill's server declarations, by id.
	Servers map[string]capability.RedactedServer
	// Tools are the tools its servers offer (approved ones, for a skill
	// already approved).
	Tools []capability.Tool
}

// Backend is one drafted backend: one tool of one server of one provider
// skill, with its argument mapping (CEL over args, as in backends.yaml).
type Backend struct {
	Provider  string            `json:"provider"`
	Skill     string            `json:"skill"`
	Server    string            `json:"server"`
	Tool      string            `json:"tool"`
	Arguments map[string]string `json:"arguments"`
}

// Proposal is a promote_provider change's proposal document.
type Proposal struct {
	// Executor is the canonical executor; New is true when the catalog
	// does not declare it (applying registers its definition).
	Executor executor.ExecutorDecl `json:"executor"`
	New      bool                  `json:"new"`
	// Backends are the drafted backends, by provider.
	Backends []Backend `json:"backends"`
	// Serving lists providers that already have a backend for the
	// executor (declared in a backends.yaml or registered before).
	Serving []string `json:"serving,omitempty"`
	// Evidence says why the change was found, one line per tool.
	Evidence []string `json:"evidence"`
	// Removed says what validation took out of the draft, and why.
	Removed []string `json:"removed,omitempty"`
	// Drafter names who drafted the mappings: "deterministic".
	Drafter string `json:"drafter"`
}

// Key identifies the proposal's content: the same executor and backends
// give the same key, so a rejected proposal is not queued again.
func (p *Proposal) Key() string {
	b, _ := json.Marshal(struct {
		E executor.ExecutorDecl
		B []Backend
	}{p.Executor, p.Backends})
	sum := sha256.Sum256(b)
	return "promote_provider:" + p.Executor.Name + ":" + hex.EncodeToString(sum[:8])
}

// Summary is the proposal in one line.
func (p *Proposal) Summary() string {
	parts := make([]string, 0, len(p.Backends))
	for _, b := range p.Backends {
		parts = append(parts, fmt.Sprintf("%s (%s: %s/%s)", b.Provider, b.Skill, b.Server, b.Tool))
	}
	s := p.Executor.Name + ": one executor with backends " + strings.Join(parts, ", ")
	if len(p.Serving) > 0 {
		s += " beside " + strings.Join(p.Serving, ", ")
	}
	if p.New {
		s += " (a new executor)"
	}
	return s
}

// nonWord splits declarations into words.
var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// ProviderOf recognises the catalog provider a server belongs to: the
// first provider whose name is a word sequence of the server id, else of
// its command, arguments or URL (npm "@modelcontextprotocol/server-github"
// → github). It reports false when none or several match in the first
// place that names any.
func ProviderOf(cat *executor.Catalog, id string, decl capability.RedactedServer) (string, bool) {
	for _, src := range [][]string{{id}, append(append([]string{decl.Command}, decl.Args...), decl.URL)} {
		words := " " + strings.TrimSpace(nonWord.ReplaceAllString(strings.ToLower(strings.Join(src, " ")), " ")) + " "
		var found []string
		for _, p := range cat.Providers {
			if strings.Contains(words, " "+strings.ReplaceAll(p.Name, "-", " ")+" ") {
				found = append(found, p.Name)
			}
		}
		switch len(found) {
		case 1:
			return found[0], true
		case 0:
			continue
		default:
			return "", false
		}
	}
	return "", false
}

// offer is one tool of one provider, under its canonical executor name.
type offer struct {
	provider, skill, server string
	tool                    capability.Tool
}

// Serving says, per executor name, which providers already serve it and
// which tools ("skill:server/tool") backends already map: those are not
// offered again.
type Serving struct {
	Providers map[string][]string
	Mapped    map[string]bool
}

// Detect returns the promote_provider proposals that skill trigger's
// tools make among skills, each validated: for every executor name one of
// trigger's tools stands for (its own name, a synonym's, or without a
// provider suffix) that another provider's skill offers too, or already
// serves, a proposal with one backend per provider not yet serving it. A
// group the deterministic drafter cannot map (a tool requires an argument
// the others do not have) yields nothing here; [DetectAll] returns it.
// Proposals come sorted by executor name.
func Detect(cat *executor.Catalog, skills []Skill, trigger string, serving Serving) []Proposal {
	out, _ := DetectAll(cat, skills, trigger, serving)
	return out
}

// Offer is one provider's tool in a [Group].
type Offer struct {
	Provider string          `json:"provider"`
	Skill    string          `json:"skill"`
	Server   string          `json:"server"`
	Tool     capability.Tool `json:"tool"`
}

// Group is a promotion candidate the deterministic drafter could not map:
// what a [Drafter] (a model) is asked to draft.
type Group struct {
	// Executor is the executor name; Known its catalog definition, nil
	// when the executor is new.
	Executor string
	Known    *executor.ExecutorDecl
	// Offers are the tools to map, one per provider; Serving the
	// providers that already serve the executor.
	Offers  []Offer
	Serving []string
	// Why says why the deterministic drafter gave up.
	Why string
	// Tools are every tool of every provider skill detection read: what
	// a drafter's lookups may read (never call).
	Tools []Offer
}

// DetectAll is [Detect] that also returns the candidates the
// deterministic drafter could not map.
func DetectAll(cat *executor.Catalog, skills []Skill, trigger string, serving Serving) ([]Proposal, []Group) {
	groups := map[string][]offer{}
	for _, s := range skills {
		for _, t := range s.Tools {
			if serving.Mapped[s.Key+":"+t.ExtensionID+"/"+t.CapabilityID] {
				continue
			}
			prov := s.Provider
			if prov == "" {
				prov, _ = ProviderOf(cat, t.ExtensionID, s.Servers[t.ExtensionID])
			}
			base := t.CapabilityID
			if b, p, ok := cat.SplitProvider(base); ok {
				if prov != "" && p != prov {
					continue
				}
				base, prov = b, p
			}
			if prov == "" {
				continue
			}
			name, err := executor.CanonicalName(base)
			if err != nil {
				continue
			}
			groups[name] = append(groups[name], offer{provider: prov, skill: s.Key, server: t.ExtensionID, tool: t})
		}
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []Proposal
	var undrafted []Group
	held := heldTools(cat, skills)
	for _, name := range names {
		picked, ok := candidate(groups[name], trigger, serving.Providers[name])
		if !ok {
			continue
		}
		g := Group{Executor: name, Serving: slices.Clone(serving.Providers[name]), Tools: held}
		if ex := cat.Lookup(name); ex != nil {
			g.Known = &executor.ExecutorDecl{Name: ex.Name, Description: ex.Description, InputSchema: ex.InputSchema}
		}
		for _, o := range picked {
			g.Offers = append(g.Offers, Offer{Provider: o.provider, Skill: o.skill, Server: o.server, Tool: o.tool})
		}
		p, ok := draft(cat, name, picked, serving.Providers[name])
		if !ok {
			g.Why = "the tools have no argument in common with the same name and type"
			undrafted = append(undrafted, g)
			continue
		}
		v, err := Validate(cat, p, skills, serving)
		if err != nil {
			g.Why = err.Error()
			undrafted = append(undrafted, g)
			continue
		}
		out = append(out, v)
	}
	return out, undrafted
}

// candidate picks one offer per provider not serving the executor yet
// (the first skill of each), if trigger takes part and two providers would
// serve it.
func candidate(offers []offer, trigger string, serving []string) ([]offer, bool) {
	slices.SortFunc(offers, func(a, b offer) int {
		return cmp.Or(strings.Compare(a.provider, b.provider), strings.Compare(a.skill, b.skill), strings.Compare(a.server, b.server))
	})
	var picked []offer
	for _, o := range offers {
		if slices.Contains(serving, o.provider) || slices.ContainsFunc(picked, func(p offer) bool { return p.provider == o.provider }) {
			continue
		}
		picked = append(picked, o)
	}
	if !slices.ContainsFunc(picked, func(o offer) bool { return o.skill == trigger }) || len(picked)+len(serving) < 2 {
		return nil, false
	}
	return picked, true
}

// draft writes the deterministic proposal of one candidate group: the
// catalog's executor, or one drafted from the tools ([draftArgs]), and
// each tool's mapping from the argument matcher ([mapTool]).
func draft(cat *executor.Catalog, name string, picked []offer, serving []string) (Proposal, bool) {
	p := Proposal{Serving: slices.Clone(serving), Drafter: "deterministic"}
	for _, o := range picked {
		p.Evidence = append(p.Evidence, evidence(o.skill, o.provider, o.server, o.tool.CapabilityID))
	}
	ex := cat.Lookup(name)
	if ex != nil {
		p.Executor = executor.ExecutorDecl{Name: ex.Name, Description: ex.Description, InputSchema: ex.InputSchema}
	} else {
		decl, ok := commonExecutor(name, picked)
		if !ok {
			return Proposal{}, false
		}
		p.Executor, p.New = decl, true
	}
	for _, o := range picked {
		args := mapTool(p.Executor.InputSchema, o.tool.InputSchema)
		if len(args) == 0 {
			return Proposal{}, false
		}
		p.Backends = append(p.Backends, Backend{Provider: o.provider, Skill: o.skill, Server: o.server, Tool: o.tool.CapabilityID, Arguments: args})
	}
	return p, true
}

func evidence(skill, provider, server, tool string) string {
	return fmt.Sprintf("%s (provider %s) offers %s/%s", skill, provider, server, tool)
}

// verbPhrases start a drafted executor's description.
var verbPhrases = map[executor.Verb]string{
	executor.Find: "Find", executor.List: "List", executor.Read: "Read", executor.Create: "Create a new",
	executor.Update: "Update a", executor.Write: "Write a", executor.Delete: "Delete a", executor.Send: "Send a",
}

// commonExecutor drafts a new executor from the arguments the matcher
// pairs across every tool of offers ([draftArgs]).
func commonExecutor(name string, offers []offer) (executor.ExecutorDecl, bool) {
	verb, object, err := executor.ParseName(name)
	if err != nil {
		return executor.ExecutorDecl{}, false
	}
	props, required := draftArgs(offers)
	if len(props) == 0 {
		return executor.ExecutorDecl{}, false
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	raw, _ := json.Marshal(schema)
	desc := fmt.Sprintf("%s %s.", verbPhrases[verb], strings.ReplaceAll(object, "_", " "))
	return executor.ExecutorDecl{Name: name, Description: desc, InputSchema: raw}, true
}

// neutral keeps of a property schema its type and structure, dropping the
// provider's description and title (which may name the provider).
func neutral(s json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(s, &m) != nil {
		return s
	}
	delete(m, "description")
	delete(m, "title")
	out, _ := json.Marshal(m)
	return out
}

// schemaProps reads an object schema's properties (raw) and required list.
func schemaProps(raw json.RawMessage) (map[string]json.RawMessage, []string) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(raw, &s)
	return s.Properties, s.Required
}

// Validate checks a proposal, whoever drafted it, and returns it with what
// does not hold removed (and said in Removed): a backend naming a tool its
// skill does not offer, a provider the catalog does not know or already
// serving, a second backend of one provider, a mapping that does not
// compile or type-check against the tool's schema. It fails when the
// executor is not a valid one (a new executor clashing with the catalog,
// or a known executor with another definition) or when fewer than two
// providers would serve it.
func Validate(cat *executor.Catalog, p Proposal, skills []Skill, serving Serving) (Proposal, error) {
	v := p
	v.Backends, v.Removed = nil, slices.Clone(p.Removed)
	v.Serving = slices.Clone(serving.Providers[p.Executor.Name])
	var ex *executor.Executor
	if known := cat.Lookup(p.Executor.Name); known != nil {
		if p.New {
			return Proposal{}, fmt.Errorf("executor %s is already in the catalog: propose backends for it, not a new executor", p.Executor.Name)
		}
		ex = known
		v.Executor = executor.ExecutorDecl{Name: known.Name, Description: known.Description, InputSchema: known.InputSchema}
	} else {
		if !p.New {
			return Proposal{}, fmt.Errorf("executor %s is not in the catalog: a proposal declaring it must say new", p.Executor.Name)
		}
		if _, prov, ok := cat.SplitProvider(p.Executor.Name); ok {
			return Proposal{}, fmt.Errorf("executor %s carries provider %s's suffix: an executor is provider-neutral", p.Executor.Name, prov)
		}
		ext, err := cat.With("proposal executor", p.Executor)
		if err != nil {
			return Proposal{}, err
		}
		ex = ext.Lookup(p.Executor.Name)
	}
	tools := map[string]capability.Tool{}
	for _, s := range skills {
		for _, t := range s.Tools {
			tools[s.Key+":"+t.ExtensionID+"/"+t.CapabilityID] = t
		}
	}
	comp := executor.NewCompiler()
	seen := map[string]bool{}
	for _, b := range p.Backends {
		at := fmt.Sprintf("backend %s (%s: %s/%s)", b.Provider, b.Skill, b.Server, b.Tool)
		t, ok := tools[b.Skill+":"+b.Server+"/"+b.Tool]
		switch {
		case !ok:
			v.Removed = append(v.Removed, at+": skill "+b.Skill+" offers no such tool")
			continue
		case !knownProvider(cat, b.Provider):
			v.Removed = append(v.Removed, at+": provider "+b.Provider+" is not in the catalog")
			continue
		case slices.Contains(v.Serving, b.Provider):
			v.Removed = append(v.Removed, at+": provider "+b.Provider+" already serves "+ex.Name)
			continue
		case seen[b.Provider]:
			v.Removed = append(v.Removed, at+": a second backend of provider "+b.Provider)
			continue
		}
		if _, err := comp.CompileMapping(ex, t, b.Arguments); err != nil {
			v.Removed = append(v.Removed, at+": "+err.Error())
			continue
		}
		seen[b.Provider] = true
		v.Backends = append(v.Backends, b)
	}
	if len(v.Backends) == 0 || len(v.Backends)+len(v.Serving) < 2 {
		why := "no backend holds"
		if len(v.Removed) > 0 {
			why = strings.Join(v.Removed, "; ")
		}
		return Proposal{}, fmt.Errorf("executor %s would not be served by two providers: %s", ex.Name, why)
	}
	return v, nil
}

func knownProvider(cat *executor.Catalog, name string) bool {
	_, ok := cat.Provider(name)
	return ok
}

// Catalog returns base with the executors applied promote_provider
// changes registered (those with a definition: new executors), the
// catalog both the gateway and detection see.
func Catalog(base *executor.Catalog, regs []store.Registration) (*executor.Catalog, error) {
	var decls []executor.ExecutorDecl
	for _, r := range regs {
		if len(r.Definition) == 0 {
			continue
		}
		var d executor.ExecutorDecl
		if err := json.Unmarshal(r.Definition, &d); err != nil {
			return nil, fmt.Errorf("change %d: executor definition: %w", r.Change, err)
		}
		decls = append(decls, d)
	}
	return base.With("registered executors", decls...)
}
