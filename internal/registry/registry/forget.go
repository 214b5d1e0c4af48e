package registry

import (
	"cmp"
	"context"
	"slices"

	"github.com/skillgate/skillgate/internal/model/capability"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// ForgottenRoot is a root recorded by an earlier scan that this scan did
// not scan (it was not given, or no longer exists): the registry mirrors
// the configuration, so the root leaves it with its skills.
type ForgottenRoot struct {
	Path  string `json:"path"`
	Scope string `json:"scope"`
	// Skills is how many of its skill directories left the registry; a
	// directory found again under a scanned root is not counted.
	Skills int `json:"skills"`
}

// forgotten lists the recorded roots not among scanned (absolute paths of
// the roots this scan records) and how many skills each takes away;
// changes are the directories this scan parses, which include any found
// again under another root. It costs a read of the roots, plus the refs of
// each forgotten root. recorded are the roots the store holds.
func (r *Registry) forgotten(ctx context.Context, recorded []store.Root, scanned map[string]bool, changes [][]discover.Candidate) ([]ForgottenRoot, error) {
	out := []ForgottenRoot{}
	var again map[string]bool
	for _, root := range recorded {
		if scanned[root.Path] || root.Scope == ScopeImported {
			continue
		}
		refs, err := r.store.Refs(ctx, root.Path)
		if err != nil {
			return nil, err
		}
		if again == nil {
			again = map[string]bool{}
			for _, cs := range changes {
				for _, c := range cs {
					again[c.Dir] = true
				}
			}
		}
		f := ForgottenRoot{Path: root.Path, Scope: root.Scope}
		for dir := range refs {
			if !again[dir] {
				f.Skills++
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// sameRoots reports whether scans record nothing the store does not hold
// already: recorded has a root of the same scope, trust, position and
// notes for each, and the scans remove and add no skill. A scan that finds
// that, every root verified, need not write (see Registry.Scan).
func sameRoots(recorded []store.Root, scans []store.RootScan) bool {
	byPath := make(map[string]*store.Root, len(recorded))
	for i := range recorded {
		byPath[recorded[i].Path] = &recorded[i]
	}
	for i := range scans {
		sc := &scans[i]
		rr, ok := byPath[sc.Root]
		if !ok || len(sc.Gone) > 0 || len(sc.Upserts) > 0 || rr.Scope != sc.Scope || rr.Trust != cmp.Or(sc.Trust, string(capability.TrustImported)) ||
			rr.Position != sc.Position || !slices.Equal(rr.Notes, sc.Notes) {
			return false
		}
	}
	return true
}
