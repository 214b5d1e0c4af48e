package registry

import (
	"context"

	"github.com/skillgate/skillgate/internal/registry/discover"
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
// each forgotten root.
func (r *Registry) forgotten(ctx context.Context, scanned map[string]bool, changes [][]discover.Candidate) ([]ForgottenRoot, error) {
	recorded, err := r.store.Roots(ctx)
	if err != nil {
		return nil, err
	}
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
