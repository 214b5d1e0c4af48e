package cedarinspect

import (
	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/ast"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

// ScopeKind is the form of one scope constraint of a policy.
type ScopeKind uint8

// Forms of a scope constraint.
const (
	// ScopeAll: principal, action or resource alone.
	ScopeAll ScopeKind = iota
	// ScopeEq: == Entity.
	ScopeEq
	// ScopeIn: in Entity.
	ScopeIn
	// ScopeInSet: in [Entities] (actions only).
	ScopeInSet
	// ScopeIs: is Type.
	ScopeIs
	// ScopeIsIn: is Type in Entity.
	ScopeIsIn
)

// Scope is one scope constraint of a policy (its principal, action or
// resource).
type Scope struct {
	Kind     ScopeKind
	Entity   types.EntityUID   // ScopeEq, ScopeIn, ScopeIsIn
	Entities []types.EntityUID // ScopeInSet
	Type     types.EntityType  // ScopeIs, ScopeIsIn
}

// Scopes returns the principal, action and resource scope of p.
func Scopes(p *cedar.Policy) (principal, action, resource Scope) {
	a := (*xast.Policy)(p.AST())
	return scope(a.Principal), scope(a.Action), scope(a.Resource)
}

func scope(n xast.IsScopeNode) Scope {
	switch s := n.(type) {
	case xast.ScopeTypeEq:
		return Scope{Kind: ScopeEq, Entity: s.Entity}
	case xast.ScopeTypeIn:
		return Scope{Kind: ScopeIn, Entity: s.Entity}
	case xast.ScopeTypeInSet:
		return Scope{Kind: ScopeInSet, Entities: s.Entities}
	case xast.ScopeTypeIs:
		return Scope{Kind: ScopeIs, Type: s.Type}
	case xast.ScopeTypeIsIn:
		return Scope{Kind: ScopeIsIn, Type: s.Type, Entity: s.Entity}
	}
	return Scope{Kind: ScopeAll}
}

// ScopeOnly is a permit with p's scope and without its conditions: it is
// satisfied exactly when p's scope holds.
func ScopeOnly(p *cedar.Policy) *cedar.Policy {
	a := (*xast.Policy)(p.AST())
	return cedar.NewPolicyFromAST((*ast.Policy)(&xast.Policy{Effect: xast.EffectPermit, Principal: a.Principal, Action: a.Action, Resource: a.Resource, Position: a.Position}))
}

// Condition is one when or unless clause of a policy.
type Condition struct {
	Unless bool
	Body   *Node
}

// Conditions returns p's when and unless clauses, in order, as trees.
func Conditions(p *cedar.Policy) []Condition {
	a := (*xast.Policy)(p.AST())
	out := make([]Condition, len(a.Conditions))
	for i, c := range a.Conditions {
		out[i] = Condition{Unless: c.Condition == xast.ConditionUnless, Body: node(c.Body)}
	}
	return out
}

// Op is the operation of a [Node].
type Op uint8

// Operations of a node, with the fields each one sets.
const (
	// OpOther is a node the tree does not model; it has no operands.
	OpOther    Op = iota
	OpValue       // a literal: Value
	OpVariable    // principal, action, resource or context: Name

	OpAnd // Left && Right
	OpOr  // Left || Right

	OpNot     // !Arg
	OpNegate  // -Arg
	OpIsEmpty // Arg.isEmpty()

	OpEquals             // Left == Right
	OpNotEquals          // Left != Right
	OpLessThan           // Left < Right
	OpLessThanOrEqual    // Left <= Right
	OpGreaterThan        // Left > Right
	OpGreaterThanOrEqual // Left >= Right
	OpAdd                // Left + Right
	OpSub                // Left - Right
	OpMult               // Left * Right
	OpIn                 // Left in Right
	OpContains           // Left.contains(Right)
	OpContainsAll        // Left.containsAll(Right)
	OpContainsAny        // Left.containsAny(Right)
	OpGetTag             // Left.getTag(Right)
	OpHasTag             // Left.hasTag(Right)

	OpHas    // Arg has Name
	OpAccess // Arg.Name
	OpLike   // Arg like Pattern

	OpIs   // Left is EntityType
	OpIsIn // Left is EntityType in Entity

	OpIfThenElse    // if If then Then else Else
	OpExtensionCall // Name(Args...) or Args[0].Name(Args[1:]...)
	OpRecord        // {Elements[i].Key: Elements[i].Value, ...}
	OpSet           // [Args...]
)

// Node is one node of a policy condition: an operation and the fields its
// [Op] names.
type Node struct {
	Op               Op
	Left, Right, Arg *Node
	If, Then, Else   *Node
	Entity           *Node
	Args             []*Node
	Elements         []RecordElement
	Value            types.Value
	Name             string
	Pattern          types.Pattern
	EntityType       types.EntityType
}

// RecordElement is one attribute of a record literal.
type RecordElement struct {
	Key   string
	Value *Node
}

func binary(op Op, b xast.BinaryNode) *Node {
	return &Node{Op: op, Left: node(b.Left), Right: node(b.Right)}
}

func unary(op Op, arg xast.IsNode) *Node {
	return &Node{Op: op, Arg: node(arg)}
}

// node converts one x/exp node (and its operands).
func node(n xast.IsNode) *Node {
	switch v := n.(type) {
	case xast.NodeValue:
		return &Node{Op: OpValue, Value: v.Value}
	case xast.NodeTypeVariable:
		return &Node{Op: OpVariable, Name: string(v.Name)}
	case xast.NodeTypeAnd:
		return binary(OpAnd, v.BinaryNode)
	case xast.NodeTypeOr:
		return binary(OpOr, v.BinaryNode)
	case xast.NodeTypeNot:
		return unary(OpNot, v.Arg)
	case xast.NodeTypeNegate:
		return unary(OpNegate, v.Arg)
	case xast.NodeTypeIsEmpty:
		return unary(OpIsEmpty, v.Arg)
	case xast.NodeTypeEquals:
		return binary(OpEquals, v.BinaryNode)
	case xast.NodeTypeNotEquals:
		return binary(OpNotEquals, v.BinaryNode)
	case xast.NodeTypeLessThan:
		return binary(OpLessThan, v.BinaryNode)
	case xast.NodeTypeLessThanOrEqual:
		return binary(OpLessThanOrEqual, v.BinaryNode)
	case xast.NodeTypeGreaterThan:
		return binary(OpGreaterThan, v.BinaryNode)
	case xast.NodeTypeGreaterThanOrEqual:
		return binary(OpGreaterThanOrEqual, v.BinaryNode)
	case xast.NodeTypeAdd:
		return binary(OpAdd, v.BinaryNode)
	case xast.NodeTypeSub:
		return binary(OpSub, v.BinaryNode)
	case xast.NodeTypeMult:
		return binary(OpMult, v.BinaryNode)
	case xast.NodeTypeIn:
		return binary(OpIn, v.BinaryNode)
	case xast.NodeTypeContains:
		return binary(OpContains, v.BinaryNode)
	case xast.NodeTypeContainsAll:
		return binary(OpContainsAll, v.BinaryNode)
	case xast.NodeTypeContainsAny:
		return binary(OpContainsAny, v.BinaryNode)
	case xast.NodeTypeGetTag:
		return binary(OpGetTag, v.BinaryNode)
	case xast.NodeTypeHasTag:
		return binary(OpHasTag, v.BinaryNode)
	case xast.NodeTypeHas:
		return &Node{Op: OpHas, Arg: node(v.Arg), Name: string(v.Value)}
	case xast.NodeTypeAccess:
		return &Node{Op: OpAccess, Arg: node(v.Arg), Name: string(v.Value)}
	case xast.NodeTypeLike:
		return &Node{Op: OpLike, Arg: node(v.Arg), Pattern: v.Value}
	case xast.NodeTypeIs:
		return &Node{Op: OpIs, Left: node(v.Left), EntityType: v.EntityType}
	case xast.NodeTypeIsIn:
		return &Node{Op: OpIsIn, Left: node(v.Left), EntityType: v.EntityType, Entity: node(v.Entity)}
	case xast.NodeTypeIfThenElse:
		return &Node{Op: OpIfThenElse, If: node(v.If), Then: node(v.Then), Else: node(v.Else)}
	case xast.NodeTypeExtensionCall:
		return &Node{Op: OpExtensionCall, Name: string(v.Name), Args: nodes(v.Args)}
	case xast.NodeTypeRecord:
		els := make([]RecordElement, len(v.Elements))
		for i, e := range v.Elements {
			els[i] = RecordElement{Key: string(e.Key), Value: node(e.Value)}
		}
		return &Node{Op: OpRecord, Elements: els}
	case xast.NodeTypeSet:
		return &Node{Op: OpSet, Args: nodes(v.Elements)}
	}
	return &Node{Op: OpOther}
}

func nodes(ns []xast.IsNode) []*Node {
	out := make([]*Node, len(ns))
	for i, n := range ns {
		out[i] = node(n)
	}
	return out
}
