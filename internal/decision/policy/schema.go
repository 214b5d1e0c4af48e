package policy

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
)

// SchemaText is skillgate's Cedar schema (also published as
// docs/schemas/skillgate.cedarschema): the entity types, attributes, action
// and context of every decision. A test checks the entities the engine
// builds against it.
//
//go:embed skillgate.cedarschema
var SchemaText string

// SchemaFile is the name findings give the schema.
const SchemaFile = "docs/schemas/skillgate.cedarschema"

// resolvedSchema parses SchemaText once; it is constant, so an error is a
// programming error caught by the tests.
var resolvedSchema = sync.OnceValues(func() (*cedarinspect.Schema, error) {
	return cedarinspect.ParseSchema(SchemaFile, []byte(SchemaText))
})

// Severity says whether a [Finding] makes a policy set invalid.
type Severity string

// Severities of findings.
const (
	// SeverityError: the policy names something skillgate never gives it
	// (an entity type, an action, an attribute), so it can never apply
	// as written.
	SeverityError Severity = "error"
	// SeverityWarning: the policy may fail to evaluate for some requests
	// (a type mismatch, an optional attribute read without has).
	SeverityWarning Severity = "warning"
)

// Finding is a problem schema validation found in one policy.
type Finding struct {
	// Position is the policy's "file:line".
	Position string   `json:"position"`
	PolicyID string   `json:"policy"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Capabilities are the capabilities ("skill:server/tool") for which
	// the policy fails to evaluate, for findings of [ValidateArguments].
	Capabilities []string `json:"capabilities,omitempty"`
}

// String formats a finding as "file:line: severity: message", naming the
// policy's @id when it has one ("policy "id" fails to evaluate for
// capability …" for findings about capabilities).
func (f Finding) String() string {
	switch {
	case f.Position == "":
		return fmt.Sprintf("%s: %s", f.Severity, f.Message)
	case len(f.Capabilities) > 0 && f.PolicyID != f.Position:
		return fmt.Sprintf("%s: %s: policy %q %s", f.Position, f.Severity, f.PolicyID, f.Message)
	case len(f.Capabilities) > 0:
		return fmt.Sprintf("%s: %s: the policy %s", f.Position, f.Severity, f.Message)
	case f.PolicyID != f.Position:
		return fmt.Sprintf("%s: %s: policy %q: %s", f.Position, f.Severity, f.PolicyID, f.Message)
	}
	return fmt.Sprintf("%s: %s: %s", f.Position, f.Severity, f.Message)
}

// ValidatePolicies checks every policy of set against skillgate's Cedar
// schema with Cedar's validator and returns the findings in policy order.
// Reads of context.args attributes are not reported: the arguments differ
// per capability, and [ValidateArguments] checks them against each one.
func ValidatePolicies(set *PolicySet) []Finding {
	rs, err := resolvedSchema()
	if err != nil {
		panic(fmt.Sprintf("policy: skillgate's schema: %v", err))
	}
	v := cedarinspect.NewValidator(rs)
	var out []Finding
	for _, p := range set.policies {
		err := v.Policy(p.ID, p.cedar)
		if err == nil {
			continue
		}
		var fs []Finding
		scopeErr := false
		for _, msg := range splitErrors(err) {
			sev, text, keep := explain(rs, p, msg)
			if !keep {
				continue
			}
			if sev == SeverityError {
				scopeErr = true
			}
			fs = append(fs, Finding{Position: p.Position, PolicyID: p.ID, Severity: sev, Message: text})
		}
		// "No applicable action" follows from an unknown type or
		// action already reported.
		if scopeErr {
			fs = slices.DeleteFunc(fs, func(f Finding) bool { return f.Message == noActionText })
		}
		// The validator's messages come in no fixed order: errors first,
		// then by text, so that the same policies always read the same.
		slices.SortStableFunc(fs, func(a, b Finding) int {
			if c := strings.Compare(string(a.Severity), string(b.Severity)); c != 0 {
				return c
			}
			return strings.Compare(a.Message, b.Message)
		})
		out = append(out, fs...)
	}
	return out
}

// splitErrors flattens the validator's joined errors into messages.
func splitErrors(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

var (
	rePolicyPrefix = regexp.MustCompile("^for policy `[^`]*`, ")
	reEntityAttr   = regexp.MustCompile("^attribute `([^`]*)` on entity type `([^`]*)` not found$")
	reContextAttr  = regexp.MustCompile("^attribute `([^`]*)` in context for [^ ]+ not found$")
	reUnknownType  = regexp.MustCompile("^unrecognized entity type `([^`]*)`$")
	reUnknownAct   = regexp.MustCompile("^unrecognized action `([^`]*)`$")
	reOptional     = regexp.MustCompile("^unable to guarantee safety of access to optional attribute `([^`]*)` (?:on entity type `([^`]*)`|in context)")
)

const noActionText = "no request skillgate makes matches this scope: the principal is always an Agent, the action Action::\"invoke\", the resource a Capability"

// explain turns one validator message into a finding's severity and text
// (what is wrong and how to fix it), or keep=false for a message that does
// not apply to skillgate (reads of context.args attributes).
func explain(rs *cedarinspect.Schema, p *Policy, msg string) (sev Severity, text string, keep bool) {
	msg = rePolicyPrefix.ReplaceAllString(msg, "")
	see := " (see " + SchemaFile + ")"
	if m := reEntityAttr.FindStringSubmatch(msg); m != nil {
		names := rs.EntityAttributes(types.EntityType(m[2]))
		hint := ""
		if c := Suggest(m[1], names); c != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", c)
		}
		if len(names) == 0 {
			return SeverityError, fmt.Sprintf("%s has no attributes; %s has no attribute %s%s", m[2], m[2], m[1], see), true
		}
		return SeverityError, fmt.Sprintf("%s has no attribute %s%s; its attributes are %s%s", m[2], m[1], hint, strings.Join(names, ", "), see), true
	}
	if m := reContextAttr.FindStringSubmatch(msg); m != nil {
		if readsArg(p, m[1]) {
			return "", "", false // context.args.NAME: arguments are not in the schema
		}
		names := rs.ContextAttributes(ActionInvoke)
		return SeverityError, fmt.Sprintf("the context has no attribute %s; it has %s (call arguments are context.args.NAME)%s", m[1], strings.Join(names, ", "), see), true
	}
	if m := reUnknownType.FindStringSubmatch(msg); m != nil {
		return SeverityError, fmt.Sprintf("unknown entity type %s; skillgate's types are %s%s", m[1], strings.Join(append(rs.EntityTypes(), "Action"), ", "), see), true
	}
	if m := reUnknownAct.FindStringSubmatch(msg); m != nil {
		return SeverityError, fmt.Sprintf("unknown action %s; the only action is Action::\"invoke\"", m[1]), true
	}
	if strings.HasPrefix(msg, "unable to find an applicable action given the policy scope constraints") {
		return SeverityError, noActionText, true
	}
	if m := reOptional.FindStringSubmatch(msg); m != nil {
		where := "context"
		if m[2] != "" {
			where = m[2]
		}
		return SeverityWarning, fmt.Sprintf("%s.%s may be absent and the policy then fails to evaluate; test it first: … has %s && …", where, m[1], m[1]), true
	}
	return SeverityWarning, msg + "; the policy fails to evaluate (or never matches) where this happens", true
}

// readsArg reports whether the policy reads the call argument name
// (context.args.name, context.args["name"], context.args has name): the
// validator reports such a read as a missing context attribute.
func readsArg(p *Policy, name string) bool {
	q := regexp.QuoteMeta(name)
	re, err := regexp.Compile(`context\s*\.\s*args\s*(?:\.\s*` + q + `\b|\[\s*"` + q + `"\s*\]|has\s+"?` + q + `\b)`)
	return err == nil && re.Match(p.cedar.MarshalCedar())
}

// Suggest returns the candidate nearest to s by edit distance (ignoring
// case) when it is near enough to be a likely misspelling (at most a third
// of s's length), else "". Policy findings use it for attribute names and
// the CLI for configuration keys.
func Suggest(s string, candidates []string) string {
	best, bestD := "", len(s)/3+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
