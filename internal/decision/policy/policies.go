package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	cedar "github.com/cedar-policy/cedar-go"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Bounds on policy sources.
const (
	// MaxPolicyFileBytes bounds one policy file or stored policy.
	MaxPolicyFileBytes = 4 << 20
	// MaxPolicies bounds the statements of a policy set.
	MaxPolicies = 100_000
	// MaxPolicyFiles bounds the *.cedar files read from a directory.
	MaxPolicyFiles = 10_000
)

// Annotations skillgate reads.
const (
	// AnnotationID names a policy in decisions: @id("deny-prod-writes").
	AnnotationID = "id"
	// AnnotationConstraints attaches typed constraints (the JSON of
	// [constraint.Set]) to a permit: they apply to every call it allows.
	AnnotationConstraints = "constraints"
)

// DefaultPolicyText is the policy set in effect when no policy is
// configured (no DATA/policies/*.cedar file and no stored policy): every
// invoke of a capability in the principal's scope is permitted, so the
// registry projection, the typed constraints, rate limits and approval
// grants still apply. Configuring any policy replaces it; copy it into a
// file to keep it.
const DefaultPolicyText = `// skillgate's default policy: permit every invoke of a capability in the
// principal's scope (registry ∩ tier ∩ delegation). Scope, constraints, rate
// limits and approval grants still apply.
@id("skillgate-default-permit")
permit (principal, action == Action::"invoke", resource);
`

// DefaultPolicySource names DefaultPolicyText in positions.
const DefaultPolicySource = "(default)"

// Source is one policy document: a file or a stored policy.
type Source struct {
	// Name appears in positions: a file path, or "store:<id>".
	Name string
	Text []byte
}

// StoredPolicy is a policy document kept in the store.
type StoredPolicy = store.StoredPolicy

// Policy is one parsed policy statement.
type Policy struct {
	// ID is its @id, else its position.
	ID string `json:"id"`
	// Position is "file:line".
	Position string `json:"position"`
	Effect   string `json:"effect"` // "permit" or "forbid"
	// Constraints are its @constraints, if any.
	Constraints *constraint.Set `json:"constraints,omitempty"`

	cedar       *cedar.Policy
	compiled    *constraint.Compiled
	usesContext bool
	// argNames are the context.args attributes the policy reads; fullArgs
	// is set when it reads context.args (or the context) as a whole.
	argNames []string
	fullArgs bool
	// native is the policy's conditions compiled for evaluation without a
	// Cedar context (nil when they have a shape it does not handle), scope
	// the policy without its conditions; both only for policies that read
	// the context (native.go).
	native    *nativeCond
	scope     *cedar.Policy
	reason    cedar.DiagnosticReason // what Authorize reports when it is satisfied
	permitMsg string                 // "permitted by <id>"
	forbidMsg string                 // "forbidden by <id>"
	seq       int                    // order in the set
}

// PolicySet is a parsed, immutable set of policies.
type PolicySet struct {
	policies []*Policy
	byID     map[cedar.PolicyID]*Policy
	// argNames is the union of the policies' argNames, nil when a policy
	// reads the arguments as a whole (fullArgs).
	argNames map[string]struct{}
	fullArgs bool
	// sortedArgNames lists argNames in order, for context cache keys.
	sortedArgNames []string
	// contexts caches Cedar contexts by the values of the arguments the
	// policies read (see contextCache).
	contexts contextCache
	// Default is true when this is the default set.
	Default bool
}

// Policies returns the statements in source order.
func (s *PolicySet) Policies() []*Policy { return slices.Clone(s.policies) }

// Len is the number of statements.
func (s *PolicySet) Len() int { return len(s.policies) }

// All implements cedar.PolicyIterator over the whole set, for comparisons
// with a bare cedar.Authorize.
func (s *PolicySet) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, p := range s.policies {
			if !yield(cedar.PolicyID(p.ID), p.cedar) {
				return
			}
		}
	}
}

// DefaultPolicies returns the default set ([DefaultPolicyText]).
func DefaultPolicies() *PolicySet {
	s, err := ParsePolicies([]Source{{Name: DefaultPolicySource, Text: []byte(DefaultPolicyText)}})
	if err != nil {
		panic(err) // the default text is a constant
	}
	s.Default = true
	return s
}

// ParsePolicies parses policy sources into one set. Every problem is
// reported (joined), each as "file:line: message" wrapping
// [ErrInvalidPolicy]: a syntax error, a duplicate or malformed @id, an
// invalid @constraints, @constraints on a forbid. An empty list of sources
// gives an empty set, which denies everything (see [DefaultPolicies]).
func ParsePolicies(sources []Source) (*PolicySet, error) {
	set := &PolicySet{byID: map[cedar.PolicyID]*Policy{}}
	var errs []error
	for _, src := range sources {
		if len(src.Text) > MaxPolicyFileBytes {
			errs = append(errs, fmt.Errorf("%w: %s: %d bytes, limit %d; split it", ErrInvalidPolicy, src.Name, len(src.Text), MaxPolicyFileBytes))
			continue
		}
		if !utf8.Valid(src.Text) || bytes.IndexByte(src.Text, 0) >= 0 {
			errs = append(errs, fmt.Errorf("%w: %s: not UTF-8 text (or contains NUL bytes)", ErrInvalidPolicy, src.Name))
			continue
		}
		list, err := cedar.NewPolicyListFromBytes(src.Name, src.Text)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidPolicy, parseErrorText(src.Name, err)))
			continue
		}
		for _, cp := range list {
			if len(set.policies) >= MaxPolicies {
				return nil, fmt.Errorf("%w: more than %d policies", ErrInvalidPolicy, MaxPolicies)
			}
			p, err := newPolicy(src.Name, cp)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev, dup := set.byID[cedar.PolicyID(p.ID)]; dup {
				errs = append(errs, fmt.Errorf("%w: %s: @id %q is already used at %s; ids must be unique", ErrInvalidPolicy, p.Position, p.ID, prev.Position))
				continue
			}
			p.seq = len(set.policies)
			set.policies = append(set.policies, p)
			set.byID[cedar.PolicyID(p.ID)] = p
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	set.argNames = map[string]struct{}{}
	for _, p := range set.policies {
		set.fullArgs = set.fullArgs || p.fullArgs
		for _, n := range p.argNames {
			set.argNames[n] = struct{}{}
		}
	}
	for n := range set.argNames {
		set.sortedArgNames = append(set.sortedArgNames, n)
	}
	slices.Sort(set.sortedArgNames)
	return set, nil
}

// parseErrorText turns cedar's "parser error: parse error at <input>:3:75
// ..." into "file:3:75: ...".
func parseErrorText(name string, err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "parser error: ")
	msg = strings.TrimPrefix(msg, "parse error at ")
	if m := reParseError.FindStringSubmatch(msg); m != nil {
		file := m[1]
		if file == "<input>" {
			file = name
		}
		return file + ":" + m[2] + ":" + m[3] + ": " + explainParse(m[4], m[5])
	}
	if strings.HasPrefix(msg, "<input>:") {
		return name + ":" + strings.TrimPrefix(msg, "<input>:")
	}
	return name + ": " + msg
}

// reParseError splits cedar-go's `FILE:LINE:COL "TOKEN": PROBLEM`.
// (the tokenizer's errors have no token).
var reParseError = regexp.MustCompile(`^(.*?):(\d+):(\d+):? ("(?:[^"\\]|\\.)*")?:? ?(.*)$`)

var reGotWant = regexp.MustCompile(`^(?:exact )?got (.*) want (\S+)$`)

// explainParse words one of cedar-go's parse problems as what was found,
// what was expected, and the usual fix. tok is the quoted token there.
func explainParse(tok, problem string) string {
	found := "found " + tok
	switch tok {
	case `""`:
		found = "the text ended"
	case "":
		found = "found an error"
	}
	if m := reGotWant.FindStringSubmatch(problem); m != nil {
		if m[1] == "" {
			found = "the text ended"
		} else {
			found = "found " + strconv.Quote(m[1])
		}
		hint := map[string]string{
			";": "end each policy with ;",
			",": "the scope is (principal …, action …, resource …) separated by commas, and compares with ==",
			"{": "conditions go in braces: when { … } or unless { … }",
			"}": "close the condition's brace",
			"(": "the scope follows permit or forbid in parentheses: permit (principal, action, resource)",
			")": "close the parenthesis",
		}[m[2]]
		if m[1] == "=" {
			hint = "compare with ==, not ="
		}
		text := fmt.Sprintf("expected %q but %s", m[2], found)
		if hint != "" {
			text += "; " + hint
		}
		return text
	}
	switch {
	case strings.HasPrefix(problem, "unexpected effect: "):
		return fmt.Sprintf("a policy starts with permit or forbid (after any @annotations), not %q", strings.TrimPrefix(problem, "unexpected effect: "))
	case problem == "literal not terminated":
		return `a string is not closed; end it with "`
	case problem == "invalid primary":
		return found + ` where a value was expected: a string, a number, true or false, principal, action, resource, context, or an entity such as Agent::"acme/drafter" (compare with ==, not = or ===)`
	case problem == "expected ident" || problem == "expected ident or reserved keyword":
		return found + " where a name was expected"
	case problem == "expected string literal" || problem == "expected string":
		return found + ` where a string in double quotes was expected`
	case strings.HasPrefix(problem, "duplicate annotation: "):
		return "the annotation " + strings.TrimPrefix(problem, "duplicate annotation: ") + " is given twice; keep one"
	}
	return problem + " (" + found + ")"
}

func newPolicy(name string, cp *cedar.Policy) (*Policy, error) {
	pos := cp.Position()
	p := &Policy{
		Position: name + ":" + strconv.Itoa(pos.Line),
		Effect:   "permit",
		cedar:    cp,
	}
	if cp.Effect() == cedar.Forbid {
		p.Effect = "forbid"
	}
	ann := cp.Annotations()
	p.ID = p.Position
	if id, ok := ann[AnnotationID]; ok {
		s := string(id)
		if s == "" || len(s) > 128 || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("%w: %s: @id must be 1 to 128 printable characters", ErrInvalidPolicy, p.Position)
		}
		p.ID = s
	}
	if raw, ok := ann[AnnotationConstraints]; ok {
		if p.Effect == "forbid" {
			return nil, fmt.Errorf("%w: %s: @constraints has no meaning on a forbid; move it to the permit it narrows", ErrInvalidPolicy, p.Position)
		}
		set, err := constraint.Parse(json.RawMessage(raw))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: @constraints: %w", ErrInvalidPolicy, p.Position, err)
		}
		c, err := set.Compile()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: @constraints: %w", ErrInvalidPolicy, p.Position, err)
		}
		p.Constraints, p.compiled = &set, c
	}
	text := string(cp.MarshalCedar())
	if err := checkEntityRefs(text); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPolicy, p.Position, err)
	}
	p.usesContext = strings.Contains(text, "context")
	if p.usesContext {
		p.argNames, p.fullArgs = contextArgNames(text)
		p.native, p.scope = compileNative(cedarinspect.Conditions(cp), p.argNames, p.fullArgs), cedarinspect.ScopeOnly(cp)
	}
	p.permitMsg, p.forbidMsg = "permitted by "+p.ID, "forbidden by "+p.ID
	p.reason = cedar.DiagnosticReason{PolicyID: cedar.PolicyID(p.ID), Position: cp.Position()}
	return p, nil
}

// contextArgNames finds the context.args attributes a policy's text reads:
// context.args.NAME, context.args has NAME (or "NAME") and
// context.args["NAME"]. Any other use of context.args or of the context
// (other than context.session and context.delegated) sets full. It is
// conservative: text inside string literals can only add names or set
// full, which costs speed, never correctness.
func contextArgNames(text string) (names []string, full bool) {
	for {
		i := strings.Index(text, "context")
		if i < 0 {
			return names, full
		}
		text = text[i+len("context"):]
		switch {
		case strings.HasPrefix(text, ".session"), strings.HasPrefix(text, ".delegated"):
			continue
		case strings.HasPrefix(text, ".args."):
			name := identPrefix(text[len(".args."):])
			if name == "" {
				return nil, true
			}
			names = append(names, name)
		case strings.HasPrefix(text, ".args has "):
			rest := text[len(".args has "):]
			name := identPrefix(rest)
			if name == "" {
				q, err := strconv.QuotedPrefix(rest)
				if err != nil {
					return nil, true
				}
				name, _ = strconv.Unquote(q)
			}
			names = append(names, name)
		case strings.HasPrefix(text, ".args["):
			q, err := strconv.QuotedPrefix(text[len(".args["):])
			if err != nil {
				return nil, true
			}
			name, _ := strconv.Unquote(q)
			names = append(names, name)
		default:
			return nil, true
		}
	}
}

func identPrefix(s string) string {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return s[:i]
}

// PolicyStore is the part of [Store] that holds policies.
type PolicyStore interface {
	// Policies returns the stored policies ordered by id.
	Policies(ctx context.Context) ([]StoredPolicy, error)
}

// ReadPolicyDir reads every *.cedar file directly in dir, in name order. A
// missing directory gives no sources. Symbolic links are not followed.
func ReadPolicyDir(dir string) ([]Source, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read policies: %w", err)
	}
	var out []Source
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".cedar") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(out) == MaxPolicyFiles {
			return nil, fmt.Errorf("%w: %s holds more than %d policy files", ErrInvalidPolicy, dir, MaxPolicyFiles)
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%w: %s is a symbolic link; policy files are not followed through links, copy the file instead", ErrInvalidPolicy, filepath.Join(dir, e.Name()))
		}
		src, err := ReadPolicyFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, nil
}

// ReadPolicyFile reads one policy file, bounded by MaxPolicyFileBytes.
func ReadPolicyFile(path string) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return Source{}, fmt.Errorf("read policy: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Source{}, fmt.Errorf("read policy: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Source{}, fmt.Errorf("%w: %s is not a regular file", ErrInvalidPolicy, path)
	}
	if fi.Size() > MaxPolicyFileBytes {
		return Source{}, fmt.Errorf("%w: %s: %d bytes, limit %d; split it", ErrInvalidPolicy, path, fi.Size(), MaxPolicyFileBytes)
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && fi.Size() > 0 {
		return Source{}, fmt.Errorf("read policy %s: %w", path, err)
	}
	return Source{Name: path, Text: b}, nil
}

// LoadPolicies reads the policy files of dir and the stored policies of st
// (either may be empty or nil) and parses them. With no policy at all it
// returns the default set.
func LoadPolicies(ctx context.Context, dir string, st PolicyStore) (*PolicySet, error) {
	var sources []Source
	if dir != "" {
		s, err := ReadPolicyDir(dir)
		if err != nil {
			return nil, err
		}
		sources = s
	}
	if st != nil {
		stored, err := st.Policies(ctx)
		if err != nil {
			return nil, fmt.Errorf("load stored policies: %w", err)
		}
		for _, p := range stored {
			sources = append(sources, Source{Name: "store:" + p.ID, Text: []byte(p.Text)})
		}
	}
	if len(sources) == 0 {
		return DefaultPolicies(), nil
	}
	return ParsePolicies(sources)
}
