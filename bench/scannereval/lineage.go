//go:build !nolineage

package main

import (
	"fmt"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/admission/secscan"
)

// references is the lineage index the harness scans with, as layer 4
// does in an install (issue 31, item 1): the corpus's skills as trusted
// references. A nil *references applies nothing.
type references struct {
	ix *lineage.Index
}

// loadReferences indexes every skill of the corpus.
func loadReferences(corpus string) (*references, error) {
	skills, err := corpusSkills(corpus)
	if err != nil {
		return nil, err
	}
	ix := lineage.New(lineage.Limits{})
	for _, s := range skills {
		if _, err := ix.Sync(lineage.Reference{Name: s, Origin: "corpus", Trusted: true}, filepath.Join(corpus, filepath.FromSlash(s))); err != nil {
			return nil, fmt.Errorf("%w: lineage: %w", errSetup, err)
		}
	}
	return &references{ix: ix}, nil
}

// apply derives the skill at root from its nearest reference other than
// self (a corpus skill is looked up without itself: leave-one-out) and
// applies the derivation to rep's findings (secscan.ApplyLineage).
func (r *references) apply(root, self string, rep *secscan.Report) error {
	if r == nil {
		return nil
	}
	files, err := lineage.ReadDir(root, r.ix.Limits())
	if err != nil {
		return err
	}
	d, err := r.ix.Derive(files, self)
	if err != nil {
		return err
	}
	rep.Findings = secscan.ApplyLineage(rep.Findings, d, files, nil)
	return nil
}
