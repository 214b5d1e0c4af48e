package policy

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestCompareRefs: compareRefs orders capability references exactly as
// comparing their strings does, separators included ("a-b:" sorts before
// "a:", though "a" is a prefix of "a-b").
func TestCompareRefs(t *testing.T) {
	parts := []string{"", "a", "a-b", "a:", "ab", "a/b", "b", "fs", "fs/x", "write_file", "z"}
	var refs []capability.Ref
	for _, s := range parts {
		for _, e := range parts {
			for _, c := range parts[:6] {
				refs = append(refs, capability.Ref{Skill: s, ExtensionID: e, CapabilityID: c})
			}
		}
	}
	for _, a := range refs {
		for _, b := range refs {
			if got, want := compareRefs(a, b), strings.Compare(a.String(), b.String()); got != want {
				t.Fatalf("compareRefs(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestScopeContains: Contains's binary search answers as a linear search
// of the entries does, on entries sorted as Engine.Scope sorts them.
func TestScopeContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Skill keys have no ':' and server ids neither ':' nor '/', so
	// distinct references have distinct strings.
	word := func(letters string) string {
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	for range 500 {
		var s Scope
		var probes []capability.Ref
		for range rng.IntN(20) {
			r := capability.Ref{Skill: word("ab-/"), ExtensionID: word("ab-_"), CapabilityID: word("ab-_/:")}
			probes = append(probes, r)
			if rng.IntN(2) == 0 {
				s.Entries = append(s.Entries, ScopeEntry{Ref: r})
			}
		}
		slices.SortFunc(s.Entries, func(a, b ScopeEntry) int { return strings.Compare(a.Ref.String(), b.Ref.String()) })
		for _, r := range probes {
			want := slices.ContainsFunc(s.Entries, func(e ScopeEntry) bool { return e.Ref == r })
			if got := s.Contains(r); got != want {
				t.Fatalf("Contains(%q) = %v, want %v; entries %v", r, got, want, s.Entries)
			}
		}
	}
}
