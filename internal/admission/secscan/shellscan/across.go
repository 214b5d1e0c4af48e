package shellscan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// CrossFinding is a download one script of a skill saves to a file, and
// another script of the same skill runs: the download and the run split
// between two files so that neither looks like a dropper alone.
type CrossFinding struct {
	// SaveScript and RunScript are the two scripts' names as given to Across.
	SaveScript, RunScript string
	Save, Run             FileUse
}

// String is the finding in one line, the form the tests compare.
func (c CrossFinding) String() string {
	return fmt.Sprintf("%s: %s:%d saves %s (%s), %s:%d runs it (%s)", DownloadThenRun,
		c.SaveScript, c.Save.Line, c.Save.File, c.Save.Command, c.RunScript, c.Run.Line, c.Run.Command)
}

// Across joins the scripts of one skill, by name: a file that one script
// saves a download to and another runs is a CrossFinding. Within one script
// the same pair is already a Finding of Analyze and is not repeated. Each run
// is reported once, with the first script (by name) that saves its file, and
// that script's first save of it, so the findings are at most the runs and
// the join takes linear time whatever the scripts hold. The findings are
// ordered by the saving script, then the running one, then lines.
func Across(scripts map[string]*Script) []CrossFinding {
	type firstSave struct {
		script string
		save   FileUse
	}
	// savers are, by file key, the scripts that save a download to the file,
	// in name order, each with its first save of it.
	savers := map[string][]firstSave{}
	names := slices.Sorted(maps.Keys(scripts))
	for _, name := range names {
		seen := map[string]bool{}
		for _, sv := range scripts[name].Saves {
			k := fileKey(sv.File)
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			savers[k] = append(savers[k], firstSave{name, sv})
		}
	}
	var out []CrossFinding
	for _, to := range names {
		for _, run := range scripts[to].Runs {
			for _, s := range savers[fileKey(run.File)] {
				if s.script != to {
					out = append(out, CrossFinding{SaveScript: s.script, RunScript: to, Save: s.save, Run: run})
					break // at most two entries are looked at: one may be the running script's own
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b CrossFinding) int {
		return cmp.Or(cmp.Compare(a.SaveScript, b.SaveScript), cmp.Compare(a.RunScript, b.RunScript),
			cmp.Compare(a.Save.Line, b.Save.Line), cmp.Compare(a.Run.Line, b.Run.Line))
	})
	return out
}
