package promote

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/platform/words"
)

// The deterministic drafter's argument matcher. It pairs an executor's
// arguments with a tool's by what the two schemas say, not only by equal
// names: "body" with GitLab's "description", "path" with "file_path",
// "number" with "issue_number", and one "repository" string with
// GitHub's "owner" + "repo" pair (split on '/') or GitLab's "project_id".
//
// Each candidate pair of arguments of compatible JSON types is scored in
// [0, 1] (see [argScore]):
//
//		score = 0.45·name + 0.25·description + 0.20·cross + 0.10·required
//
//	  - name: the Jaccard overlap of the two names' words (split at '_', '-'
//	    and camelCase, a few equivalent words folded: see equivalents);
//	  - description: the overlap coefficient (shared / smaller) of the words
//	    of each argument's name and description, common words left out;
//	  - cross: the larger share of one name's words found in the other's
//	    description ("branch" in "A branch, tag or commit");
//	  - required: 1 when both are required or both optional.
//
// Equal names score 1. A pair is proposed when it scores at least
// [MatchThreshold] and no other pair of either argument scores within
// [MatchMargin] of it (an ambiguous pair is left for a human or a
// model); pairs are taken best first, each argument once. Whatever is
// proposed is still compiled and type-checked against the tool's schema
// by [Validate].
const (
	// MatchThreshold is the least score of a proposed pair.
	MatchThreshold = 0.40
	// MatchMargin is how far a proposed pair must score above any other
	// pair of either of its arguments.
	MatchMargin = 0.05
)

// Weights of the score's parts; they sum to 1.
const (
	weightName     = 0.45
	weightDesc     = 0.25
	weightCross    = 0.20
	weightRequired = 0.10
)

// equivalents folds words that mean the same in the providers' schemas
// onto one (applied to names and descriptions alike).
var equivalents = map[string]string{
	"repo": "repository", "project": "repository",
	"body": "text", "description": "text", "desc": "text",
	"q": "query", "search": "query",
	"head": "source", "base": "target",
	"iid": "number", "num": "number",
	"ref": "branch",
	"msg": "message",
}

// stopWords carry no meaning for matching.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "for": true, "in": true, "on": true, "or": true,
	"and": true, "from": true, "is": true, "be": true, "it": true, "its": true, "when": true, "this": true,
	"that": true, "with": true, "by": true, "as": true, "at": true, "optional": true, "s": true, "you": true,
	"your": true, "which": true, "where": true, "into": true,
}

// maxArgWords bounds the words argWords keeps of one text.
const maxArgWords = 256

// argWords returns the words of an argument's name or description
// ([words.AppendName]: split at non-alphanumerics and camelCase
// boundaries, lower-cased), plurals folded ([words.Singular]), then
// equivalents folded and stop words dropped; at most maxArgWords+1.
func argWords(s string) []string {
	ws := words.AppendName(nil, s)
	out := ws[:0]
	for _, w := range ws {
		w = words.Singular(w)
		if e, ok := equivalents[w]; ok {
			w = e
		}
		if !stopWords[w] {
			out = append(out, w)
		}
		if len(out) > maxArgWords {
			break
		}
	}
	return out
}

// argInfo is one argument of an object schema, as the matcher reads it.
type argInfo struct {
	name     string
	typ      string // the JSON type, "" when not one string
	items    string // an array's item type
	required bool
	nameW    []string
	allW     []string // the words of the name and the description
}

// argsOf reads an object schema's arguments, sorted by name.
func argsOf(raw json.RawMessage) []argInfo {
	props, required := schemaProps(raw)
	out := make([]argInfo, 0, len(props))
	for name, p := range props {
		var s struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Items       *struct {
				Type any `json:"type"`
			} `json:"items"`
		}
		_ = json.Unmarshal(p, &s)
		a := argInfo{name: name, required: slices.Contains(required, name), nameW: argWords(name)}
		a.typ, _ = s.Type.(string)
		if s.Items != nil {
			a.items, _ = s.Items.Type.(string)
		}
		desc := s.Description
		if len(desc) > 1024 {
			desc = desc[:1024]
		}
		a.allW = append(slices.Clone(a.nameW), argWords(desc)...)
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b argInfo) int { return strings.Compare(a.name, b.name) })
	return out
}

// typeFits reports whether a value of executor argument e's type fits
// tool argument t's: the same type (and item type), or an integer where
// a number is wanted.
func typeFits(e, t argInfo) bool {
	fit := func(from, to string) bool { return from != "" && (from == to || from == "integer" && to == "number") }
	if !fit(e.typ, t.typ) {
		return false
	}
	return e.typ != "array" || e.items == "" && t.items == "" || fit(e.items, t.items)
}

// argScore scores the pair (e, t) in [0, 1] as the package comment says.
func argScore(e, t argInfo) float64 {
	if e.name == t.name {
		return 1
	}
	req := 0.0
	if e.required == t.required {
		req = 1
	}
	return weightName*jaccard(e.nameW, t.nameW) + weightDesc*overlap(e.allW, t.allW) +
		weightCross*max(share(t.nameW, e.allW), share(e.nameW, t.allW)) + weightRequired*req
}

func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func jaccard(a, b []string) float64 {
	x, y := set(a), set(b)
	inter := 0
	for w := range x {
		if y[w] {
			inter++
		}
	}
	if union := len(x) + len(y) - inter; union > 0 {
		return float64(inter) / float64(union)
	}
	return 0
}

func overlap(a, b []string) float64 {
	x, y := set(a), set(b)
	inter := 0
	for w := range x {
		if y[w] {
			inter++
		}
	}
	if m := min(len(x), len(y)); m > 0 {
		return float64(inter) / float64(m)
	}
	return 0
}

// share is the share of a's words found in b.
func share(a, b []string) float64 {
	x, y := set(a), set(b)
	if len(x) == 0 {
		return 0
	}
	n := 0
	for w := range x {
		if y[w] {
			n++
		}
	}
	return float64(n) / float64(len(x))
}

// pair is a scored candidate pair of an executor and a tool argument.
type pair struct {
	exec, tool string
	score      float64
}

// matchArgs pairs executor arguments with tool arguments: best first,
// each once, at least MatchThreshold, and unambiguous by MatchMargin.
func matchArgs(exec, tool []argInfo) []pair {
	var all []pair
	for _, e := range exec {
		for _, t := range tool {
			if !typeFits(e, t) {
				continue
			}
			if s := argScore(e, t); s >= MatchThreshold {
				all = append(all, pair{e.name, t.name, s})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.exec, b.exec), strings.Compare(a.tool, b.tool))
	})
	usedE, usedT := map[string]bool{}, map[string]bool{}
	var out []pair
	for i, p := range all {
		if usedE[p.exec] || usedT[p.tool] {
			continue
		}
		ambiguous := false
		for j, q := range all {
			if j != i && !usedE[q.exec] && !usedT[q.tool] && (q.exec == p.exec || q.tool == p.tool) && p.score-q.score < MatchMargin && p.score < 1 {
				ambiguous = true
				break
			}
		}
		usedE[p.exec], usedT[p.tool] = true, true // an ambiguous pair takes both out
		if !ambiguous {
			out = append(out, p)
		}
	}
	return out
}

// ownerWords and nameWords recognise the two halves of an "owner/name"
// repository reference (GitHub's owner + repo).
var (
	ownerWords = map[string]bool{"owner": true, "namespace": true, "org": true, "organization": true, "user": true, "group": true}
	nameWords  = map[string]bool{"repository": true, "name": true}
)

// repoPair finds a tool's owner + name pair: two required string
// arguments, one named for an owner and one for the repository.
func repoPair(tool []argInfo) (owner, name string, ok bool) {
	for _, t := range tool {
		if t.typ != "string" || !t.required || len(t.nameW) != 1 {
			continue
		}
		switch {
		case ownerWords[t.nameW[0]] && owner == "":
			owner = t.name
		case nameWords[t.nameW[0]] && name == "":
			name = t.name
		}
	}
	return owner, name, owner != "" && name != ""
}

// isRepository reports whether an executor argument is a repository
// reference: a string named for the repository.
func isRepository(e argInfo) bool {
	return e.typ == "string" && slices.Contains(e.nameW, "repository") && !slices.ContainsFunc(e.nameW, func(w string) bool { return w != "repository" })
}

// repoSingle reports whether a tool argument is a repository reference
// of its own: a required string whose name starts with the repository
// (GitLab's project_id, after folding "project").
func repoSingle(t argInfo) bool {
	return t.typ == "string" && t.required && len(t.nameW) > 0 && t.nameW[0] == "repository"
}

// mapTool writes the mapping of a tool's arguments from an executor's
// (both object schemas): a repository argument onto an owner + name pair
// (split on '/') when the tool has one, then the matcher's pairs. A pair
// the mapping cannot honour (an optional executor argument for a required
// tool argument) is left out; [Validate] then says what is missing.
func mapTool(execSchema, toolSchema json.RawMessage) map[string]string {
	exec, tool := argsOf(execSchema), argsOf(toolSchema)
	args := map[string]string{}
	byName := func(as []argInfo, n string) argInfo {
		i := slices.IndexFunc(as, func(a argInfo) bool { return a.name == n })
		return as[i]
	}
	if owner, name, ok := repoPair(tool); ok {
		for i, e := range exec {
			if isRepository(e) && e.required {
				args[owner] = "args." + e.name + `.split("/")[0]`
				args[name] = "args." + e.name + `.split("/")[1]`
				exec = slices.Delete(exec, i, i+1)
				tool = slices.DeleteFunc(tool, func(t argInfo) bool { return t.name == owner || t.name == name })
				break
			}
		}
	}
	for _, p := range matchArgs(exec, tool) {
		e, t := byName(exec, p.exec), byName(tool, p.tool)
		switch {
		case e.required:
			args[t.name] = "args." + e.name
		case !t.required:
			args[t.name] = "args.?" + e.name
		}
	}
	return args
}

// repositoryProp is the schema a drafted executor gives its repository
// argument, as the built-in catalog writes it.
var repositoryProp = json.RawMessage(`{"type":"string","description":"The repository, \"owner/name\" (on GitLab the project's full path).","pattern":"^[^/\\s]+(/[^/\\s]+)+$"}`)

// draftArgs drafts a new executor's arguments from the tools of offers:
// "repository" (required) when every tool has a repository reference (an
// owner + name pair or a required repository argument), then each other
// argument of the first tool that the matcher pairs with an argument of
// every other tool, under the first tool's name (required where every
// tool requires it). It returns the properties and required names.
func draftArgs(offers []offer) (map[string]json.RawMessage, []string) {
	type toolArgs struct {
		args []argInfo
		repo bool
	}
	ts := make([]toolArgs, len(offers))
	allRepo := true
	for i, o := range offers {
		ts[i].args = argsOf(o.tool.InputSchema)
		if owner, name, ok := repoPair(ts[i].args); ok {
			ts[i].repo = true
			ts[i].args = slices.DeleteFunc(ts[i].args, func(t argInfo) bool { return t.name == owner || t.name == name })
		} else if j := slices.IndexFunc(ts[i].args, repoSingle); j >= 0 {
			ts[i].repo = true
			ts[i].args = slices.Delete(ts[i].args, j, j+1)
		}
		allRepo = allRepo && ts[i].repo
	}
	props := map[string]json.RawMessage{}
	var required []string
	if allRepo {
		props["repository"] = repositoryProp
		required = append(required, "repository")
	}
	first, _ := schemaProps(offers[0].tool.InputSchema)
	for _, a := range ts[0].args {
		if !executor.ValidArgName(a.name) || a.name == executor.ProviderArg || props[a.name] != nil {
			continue
		}
		all, req := true, a.required
		for _, t := range ts[1:] {
			ps := matchArgs([]argInfo{a}, t.args)
			if len(ps) == 0 {
				all = false
				break
			}
			req = req && slices.ContainsFunc(t.args, func(x argInfo) bool { return x.name == ps[0].tool && x.required })
		}
		if !all {
			continue
		}
		props[a.name] = neutral(first[a.name])
		if req {
			required = append(required, a.name)
		}
	}
	slices.Sort(required)
	return props, required
}
