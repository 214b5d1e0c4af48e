// Package cedarinspect is the one place in skillgate that touches
// cedar-go's experimental API (github.com/cedar-policy/cedar-go/x/exp),
// which cedar-go says may change at any release. When cedar-go changes
// x/exp, only this package changes; internal/layering's test fails when
// any other package imports x/exp.
//
// It gives the policy package what cedar-go's stable API does not show:
//
//   - a policy's scope and conditions as a small tree of its own
//     ([Scopes], [Conditions], [Node]), which the native evaluator, the
//     policy index and the argument checks walk, and a policy reduced to
//     its scope ([ScopeOnly]);
//   - Cedar's schema and validator ([ParseSchema], [Schema], [Type],
//     [NewValidator]), which `policy check` and the tests use.
//
// The surface is small and stable on purpose: it names no x/exp type, so
// its callers compile unchanged across x/exp's releases.
package cedarinspect
