package policy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
)

// MaxArgumentChecks bounds [ValidateArguments]: the number of (policy,
// argument type) pairs it checks. Capabilities whose input schemas give
// the same argument types are checked once per policy, so the bound is
// reached only by thousands of distinct tools; the pairs past it are
// counted in a warning and not checked.
const MaxArgumentChecks = 10000

// ValidateArguments checks each policy of set against the capabilities
// of caps it can apply to (by its scope; enabled capabilities of enabled
// skills only), with context.args typed from each capability's input
// schema (see argsType). A read of an argument that fails to evaluate for
// valid arguments of a capability is a warning naming the capability, the
// argument and the fix: a type the operator cannot take (like on a Set),
// an argument the capability does not take or may leave out read without
// has, a JSON Schema number compared or added (not whole, it arrives as a
// decimal). skillgate denies a call when a forbid fails to evaluate, and
// skips a permit that does (see docs/policy.md). Each problem is confirmed
// by Cedar's validator with that schema (but the number one, which Cedar's
// types cannot state); reads of arguments of unknown type (oneOf, several
// types) are not checked. Findings come in policy order, one per policy
// and problem, listing the capabilities it affects.
func ValidateArguments(set *PolicySet, caps []Capability) []Finding {
	return validateArguments(set, caps, MaxArgumentChecks)
}

// validateArguments is ValidateArguments with at most limit checks.
func validateArguments(set *PolicySet, caps []Capability, limit int) []Finding {
	rs, err := resolvedSchema()
	if err != nil {
		panic(fmt.Sprintf("policy: skillgate's schema: %v", err))
	}
	type capArgs struct {
		c   *Capability
		ref string
		sig string
		t   *argType
	}
	var cs []capArgs
	for i := range caps {
		c := &caps[i]
		if !c.Enabled || c.SkillState != SkillEnabled {
			continue
		}
		t := argsType(c.InputSchema)
		cs = append(cs, capArgs{c: c, ref: c.Ref().String(), sig: t.signature(), t: t})
	}
	slices.SortFunc(cs, func(a, b capArgs) int { return strings.Compare(a.ref, b.ref) })
	base := cedarinspect.NewValidator(rs)
	validators := map[string]*cedarinspect.Validator{}
	var out []Finding
	checks, skipped := 0, 0
	for _, p := range set.policies {
		if !p.usesContext || len(p.argNames) == 0 && !p.fullArgs {
			continue
		}
		principal, action, resource := cedarinspect.Scopes(p.cedar)
		if !actionMayBeInvoke(action) {
			continue
		}
		rk, ok := resourceKey(resource)
		if _, pok := principalKey(principal); !ok || !pok {
			continue
		}
		conds := cedarinspect.Conditions(p.cedar)
		var baseMsgs map[string]bool
		type problem struct {
			text string
			caps []string
		}
		var problems []*problem
		byText := map[string]*problem{}
		done := map[string][]argProblem{} // signature → its problems
		for _, ca := range cs {
			if rk != (types.EntityUID{}) && !scopeHolds(rk, ca.c) {
				continue
			}
			ps, ok := done[ca.sig]
			if !ok {
				if checks >= limit {
					skipped++
					continue
				}
				checks++
				if baseMsgs == nil {
					baseMsgs = map[string]bool{}
					for _, m := range validatorMessages(base, p) {
						baseMsgs[m] = true
					}
				}
				v := validators[ca.sig]
				if v == nil {
					v = cedarinspect.NewValidator(argsSchema(rs, ca.t))
					validators[ca.sig] = v
				}
				ps = checkArgs(p, conds, ca.t, v, baseMsgs)
				done[ca.sig] = ps
			}
			for _, pr := range ps {
				key := pr.verb + "\x00" + pr.detail
				if byText[key] == nil {
					byText[key] = &problem{text: key}
					problems = append(problems, byText[key])
				}
				byText[key].caps = append(byText[key].caps, ca.ref)
			}
		}
		for _, pr := range problems {
			verb, detail, _ := strings.Cut(pr.text, "\x00")
			if len(pr.caps) > 1 {
				detail = plural.Replace(detail)
			}
			out = append(out, Finding{Position: p.Position, PolicyID: p.ID, Severity: SeverityWarning,
				Message:      fmt.Sprintf("%s for %s: %s", verb, capabilityList(pr.caps), detail),
				Capabilities: pr.caps})
		}
	}
	if skipped > 0 {
		out = append(out, Finding{Severity: SeverityWarning,
			Message: fmt.Sprintf("call arguments were checked for %d policy and argument-type pairs, the limit; %d more were not checked", limit, skipped)})
	}
	return out
}

// plural rewords a problem found for one capability for several.
var plural = strings.NewReplacer("which it does not take", "which they do not take",
	"in its input schema", "in their input schemas", "which its input schema does not declare", "which their input schemas do not declare")

// scopeHolds reports whether a resource scope's entity (from resourceKey)
// is c or one of its ancestors, as capabilityEntities names them.
func scopeHolds(rk types.EntityUID, c *Capability) bool {
	switch rk.Type {
	case TypeCapability:
		return string(rk.ID) == c.Ref().String()
	case TypeSkill:
		return string(rk.ID) == c.SkillKey
	case TypeExtension:
		return string(rk.ID) == c.SkillKey+":"+c.ExtensionID
	}
	return false
}

// capabilityList names capabilities in a finding: "capability a",
// "capabilities a, b and c", "4 capabilities (a, b, c and 1 more)".
func capabilityList(refs []string) string {
	switch n := len(refs); {
	case n == 1:
		return "capability " + refs[0]
	case n <= 3:
		return "capabilities " + strings.Join(refs[:n-1], ", ") + " and " + refs[n-1]
	default:
		return fmt.Sprintf("%d capabilities (%s and %d more)", n, strings.Join(refs[:3], ", "), n-3)
	}
}

// argsSchema is skillgate's schema with context.args typed t.
func argsSchema(rs *cedarinspect.Schema, t *argType) *cedarinspect.Schema {
	ct, ok := t.cedarType()
	if !ok {
		ct = cedarinspect.RecordType(nil)
	}
	return rs.WithContextType(ActionInvoke, "args", ct)
}

// validatorMessages are the validator's messages for one policy, without
// the "for policy `id`, " prefix.
func validatorMessages(v *cedarinspect.Validator, p *Policy) []string {
	err := v.Policy(p.ID, p.cedar)
	if err == nil {
		return nil
	}
	var out []string
	for _, m := range splitErrors(err) {
		out = append(out, rePolicyPrefix.ReplaceAllString(m, ""))
	}
	return out
}

// argProblem is one problem of a policy's argument reads for one argument
// type.
type argProblem struct {
	verb   string // "fails to evaluate"
	detail string
}

// Kinds of problems the walker finds, by what confirms them.
type argFindingKind uint8

const (
	findMissing  argFindingKind = iota // confirmed by "attribute `x` in context … not found"
	findOptional                       // confirmed by "… optional attribute `args.x` …"
	findType                           // confirmed by any message the base schema did not give
	findNumber                         // not a Cedar type error: always reported
)

type argFinding struct {
	kind   argFindingKind
	leaf   string // findMissing: the attribute; findOptional: "args.a.b"
	detail string
}

// checkArgs finds the problems of p's argument reads under t, keeping
// those Cedar's validator v confirms.
func checkArgs(p *Policy, conds []cedarinspect.Condition, t *argType, v *cedarinspect.Validator, base map[string]bool) []argProblem {
	w := &argWalker{root: t}
	for _, c := range conds {
		w.expr(c.Body, needBool, "a when or unless condition", nil)
	}
	msgs := validatorMessages(v, p)
	var fresh []string
	for _, m := range msgs {
		if !base[m] {
			fresh = append(fresh, m)
		}
	}
	var out []argProblem
	seen := map[string]bool{}
	explained := false
	for _, f := range w.found {
		ok := false
		switch f.kind {
		case findMissing:
			ok = slices.ContainsFunc(msgs, func(m string) bool {
				mm := reContextAttr.FindStringSubmatch(m)
				return mm != nil && mm[1] == f.leaf
			})
		case findOptional:
			ok = slices.ContainsFunc(msgs, func(m string) bool {
				return strings.Contains(m, "optional attribute `"+f.leaf+"`")
			})
		case findType:
			ok = len(fresh) > 0
		case findNumber:
			ok = true
		}
		if ok && !seen[f.detail] {
			seen[f.detail] = true
			explained = explained || f.kind != findNumber
			out = append(out, argProblem{verb: "fails to evaluate", detail: f.detail})
		}
	}
	if !explained && !w.unknownRead {
		for _, m := range fresh {
			if reContextAttr.MatchString(m) || reOptional.MatchString(m) {
				continue // a context attribute, reported by ValidatePolicies
			}
			out = append(out, argProblem{verb: "may fail to evaluate", detail: "Cedar's validator: " + m})
		}
	}
	return out
}

// need is what an operator needs of an operand.
type need uint8

const (
	needAny need = iota
	needString
	needLong
	needBool
	needSet
	needEntity
	needDecimal
	needIP
	needTime
)

var needNames = [...]string{"", "a String", "a Long", "a Bool", "a Set", "an entity", "a decimal", "an ipaddr", "a datetime or duration"}

// extension methods by the type of their receiver.
var methodNeeds = map[types.Path]need{
	"isIpv4": needIP, "isIpv6": needIP, "isLoopback": needIP, "isMulticast": needIP, "isInRange": needIP,
	"lessThan": needDecimal, "lessThanOrEqual": needDecimal, "greaterThan": needDecimal, "greaterThanOrEqual": needDecimal,
	"offset": needTime, "durationSince": needTime, "toDate": needTime, "toTime": needTime,
	"toMilliseconds": needTime, "toSeconds": needTime, "toMinutes": needTime, "toHours": needTime, "toDays": needTime,
}

// argWalker walks a policy's conditions and checks each read of
// context.args against the arguments' type, with what the operator
// reading it needs and the has tests that guard it.
type argWalker struct {
	root  *argType
	found []argFinding
	// unknownRead is set when the policy reads an argument of unknown
	// type: the validator's complaints about it are not reported.
	unknownRead bool
}

// argPath returns the attributes after context.args that n reads
// (context.args.a.b → a, b), and false when n is not such a read.
func argPath(n *cedarinspect.Node) ([]string, bool) {
	var rev []string
	for {
		switch n.Op {
		case cedarinspect.OpAccess:
			rev = append(rev, n.Name)
			n = n.Arg
			continue
		case cedarinspect.OpVariable:
			if n.Name != "context" || len(rev) == 0 || rev[len(rev)-1] != "args" {
				return nil, false
			}
			rev = rev[:len(rev)-1]
			slices.Reverse(rev)
			return rev, true
		default:
			return nil, false
		}
	}
}

// pathText writes an argument path as a policy would:
// context.args.a["b-c"].
func pathText(path []string) string {
	var b strings.Builder
	b.WriteString("context.args")
	for _, s := range path {
		if isIdent(s) {
			b.WriteString("." + s)
		} else {
			b.WriteString("[" + strconv.Quote(s) + "]")
		}
	}
	return b.String()
}

func isIdent(s string) bool { return s != "" && identPrefix(s) == s }

func hasText(path []string) string {
	last := path[len(path)-1]
	if !isIdent(last) {
		last = strconv.Quote(last)
	}
	return pathText(path[:len(path)-1]) + " has " + last
}

// facts are the argument paths ("a\x00b") a condition proves present
// when it holds: its has tests, through &&.
func facts(n *cedarinspect.Node, into map[string]bool) map[string]bool {
	switch n.Op {
	case cedarinspect.OpHas:
		if p, ok := argPath(n.Arg); ok {
			if into == nil {
				into = map[string]bool{}
			}
			into[strings.Join(append(slices.Clone(p), n.Name), "\x00")] = true
		}
	case cedarinspect.OpAnd:
		into = facts(n.Left, into)
		into = facts(n.Right, into)
	default:
	}
	return into
}

func withFacts(guards map[string]bool, n *cedarinspect.Node) map[string]bool {
	f := facts(n, nil)
	if len(f) == 0 {
		return guards
	}
	g := maps.Clone(guards)
	if g == nil {
		g = map[string]bool{}
	}
	maps.Copy(g, f)
	return g
}

// resolve finds the type of the argument path reads, recording a read of
// an attribute that is not declared, or optional, outside a has test. It
// returns nil when the type is not known.
func (w *argWalker) resolve(path []string, guards map[string]bool) *argType {
	t := w.root
	for i, name := range path {
		if t.kind == argUnknown {
			w.unknownRead = true
			return nil
		}
		if t.kind != argRecord {
			w.add(findType, "", fmt.Sprintf("%s is %s, which has no attributes; %s reads one", pathText(path[:i]), t.name(), pathText(path[:i+1])))
			return nil
		}
		guarded := guards[strings.Join(path[:i+1], "\x00")]
		at, ok := t.attrs[name]
		if !ok {
			if !guarded {
				what := "which it does not take"
				if i > 0 {
					what = "which its input schema does not declare"
				}
				w.add(findMissing, name, fmt.Sprintf("reads %s, %s; test it first: %s && …", pathText(path[:i+1]), what, hasText(path[:i+1])))
			}
			return nil
		}
		if !at.required && !guarded {
			w.add(findOptional, "args."+strings.Join(path[:i+1], "."),
				fmt.Sprintf("%s is optional in its input schema and a call may leave it out; test it first: %s && …", pathText(path[:i+1]), hasText(path[:i+1])))
		}
		t = at.t
	}
	if t.kind == argUnknown {
		w.unknownRead = true
		return nil
	}
	return t
}

func (w *argWalker) add(kind argFindingKind, leaf, detail string) {
	w.found = append(w.found, argFinding{kind: kind, leaf: leaf, detail: detail})
}

// expr walks n, which the operator op needs to be nd.
func (w *argWalker) expr(n *cedarinspect.Node, nd need, op string, guards map[string]bool) {
	if path, ok := argPath(n); ok {
		if len(path) == 0 {
			return // context.args as a whole
		}
		if t := w.resolve(path, guards); t != nil {
			w.check(path, t, nd, op)
		}
		return
	}
	switch n.Op {
	case cedarinspect.OpAnd:
		w.expr(n.Left, needBool, "&&", guards)
		w.expr(n.Right, needBool, "&&", withFacts(guards, n.Left))
	case cedarinspect.OpOr:
		w.expr(n.Left, needBool, "||", guards)
		w.expr(n.Right, needBool, "||", guards)
	case cedarinspect.OpNot:
		w.expr(n.Arg, needBool, "!", guards)
	case cedarinspect.OpIfThenElse:
		w.expr(n.If, needBool, "if", guards)
		w.expr(n.Then, nd, op, withFacts(guards, n.If))
		w.expr(n.Else, nd, op, guards)
	case cedarinspect.OpHas:
		if path, ok := argPath(n.Arg); ok {
			if len(path) > 0 {
				if t := w.resolve(path, guards); t != nil && t.kind != argRecord {
					w.add(findType, "", fmt.Sprintf("%s is %s, and has needs a record; test the argument itself: %s", pathText(path), t.name(), hasText(path)))
				}
			}
			return
		}
		w.expr(n.Arg, needAny, "has", guards)
	case cedarinspect.OpLike:
		w.expr(n.Arg, needString, "like", guards)
	case cedarinspect.OpLessThan:
		w.pair(n, needLong, "<", guards)
	case cedarinspect.OpLessThanOrEqual:
		w.pair(n, needLong, "<=", guards)
	case cedarinspect.OpGreaterThan:
		w.pair(n, needLong, ">", guards)
	case cedarinspect.OpGreaterThanOrEqual:
		w.pair(n, needLong, ">=", guards)
	case cedarinspect.OpAdd:
		w.pair(n, needLong, "+", guards)
	case cedarinspect.OpSub:
		w.pair(n, needLong, "-", guards)
	case cedarinspect.OpMult:
		w.pair(n, needLong, "*", guards)
	case cedarinspect.OpNegate:
		w.expr(n.Arg, needLong, "-", guards)
	case cedarinspect.OpEquals:
		w.pair(n, needAny, "==", guards)
	case cedarinspect.OpNotEquals:
		w.pair(n, needAny, "!=", guards)
	case cedarinspect.OpIn:
		w.expr(n.Left, needEntity, "in", guards)
		w.expr(n.Right, needAny, "in", guards)
	case cedarinspect.OpIs:
		w.expr(n.Left, needEntity, "is", guards)
	case cedarinspect.OpIsIn:
		w.expr(n.Left, needEntity, "is", guards)
		w.expr(n.Entity, needAny, "in", guards)
	case cedarinspect.OpContains:
		w.expr(n.Left, needSet, ".contains()", guards)
		w.expr(n.Right, needAny, ".contains()", guards)
	case cedarinspect.OpContainsAll:
		w.pair(n, needSet, ".containsAll()", guards)
	case cedarinspect.OpContainsAny:
		w.pair(n, needSet, ".containsAny()", guards)
	case cedarinspect.OpIsEmpty:
		w.expr(n.Arg, needSet, ".isEmpty()", guards)
	case cedarinspect.OpGetTag:
		w.expr(n.Left, needEntity, ".getTag()", guards)
		w.expr(n.Right, needString, ".getTag()", guards)
	case cedarinspect.OpHasTag:
		w.expr(n.Left, needEntity, ".hasTag()", guards)
		w.expr(n.Right, needString, ".hasTag()", guards)
	case cedarinspect.OpAccess:
		w.expr(n.Arg, needAny, ".", guards)
	case cedarinspect.OpExtensionCall:
		for i, arg := range n.Args {
			nd := needAny
			if i == 0 {
				if m, ok := methodNeeds[types.Path(n.Name)]; ok && len(n.Args) >= 1 {
					nd = m
				}
			}
			w.expr(arg, nd, "."+n.Name+"()", guards)
		}
	case cedarinspect.OpRecord:
		for _, e := range n.Elements {
			w.expr(e.Value, needAny, "a record", guards)
		}
	case cedarinspect.OpSet:
		for _, e := range n.Args {
			w.expr(e, needAny, "a set", guards)
		}
	default:
		// literals, variables: no argument read
	}
}

func (w *argWalker) pair(b *cedarinspect.Node, nd need, op string, guards map[string]bool) {
	w.expr(b.Left, nd, op, guards)
	w.expr(b.Right, nd, op, guards)
}

// check records a read of an argument of type t where the operator op
// needs nd.
func (w *argWalker) check(path []string, t *argType, nd need, op string) {
	if nd == needAny {
		return
	}
	name := pathText(path)
	if t.kind == argNumber {
		switch nd {
		case needLong:
			w.add(findNumber, "", fmt.Sprintf("%s is a JSON Schema number, which arrives as a decimal when it is not whole, and %s needs a Long; Cedar cannot test for a whole number, so prefer a capability whose schema declares it \"integer\"", name, op))
			return
		case needDecimal:
			w.add(findNumber, "", fmt.Sprintf("%s is a JSON Schema number, which arrives as a Long when it is whole, and %s needs a decimal; compare it with <, <=, >, >= only if the schema declares it \"integer\"", name, op))
			return
		}
	}
	have := map[argKind]need{argString: needString, argLong: needLong, argBool: needBool, argSet: needSet}[t.kind]
	if have == nd && t.kind != argUnknown && t.kind != argRecord {
		return
	}
	w.add(findType, "", fmt.Sprintf("%s is %s, and %s needs %s%s", name, t.name(), op, needNames[nd], fixHint(t.kind, nd)))
}

// fixHint is the usual fix of a type mismatch, after "; ".
func fixHint(have argKind, nd need) string {
	switch {
	case nd == needString && have == argSet:
		return `; test its elements with .contains("…") or .containsAny([…]), or constrain the argument with @constraints`
	case nd == needString && (have == argLong || have == argNumber || have == argBool):
		return "; compare it with == instead"
	case nd == needLong && have == argString:
		return "; compare it with == or like instead"
	case nd == needSet && have == argString:
		return `; match a String with like "*…*" or ==`
	case nd == needBool:
		return "; make a condition of it with == or like"
	case nd == needEntity:
		return "; an argument is never an entity: compare it with == instead"
	case nd == needIP || nd == needDecimal || nd == needTime:
		return "; an argument never arrives as an extension value, and ip(), decimal(), datetime() and duration() take only literals"
	}
	return ""
}
