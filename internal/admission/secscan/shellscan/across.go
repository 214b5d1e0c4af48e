package shellscan

import (
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
// the same pair is already a Finding of Analyze and is not repeated. The
// findings are ordered by the saving script, then the running one, then lines.
func Across(scripts map[string]*Script) []CrossFinding {
	var out []CrossFinding
	names := slices.Sorted(maps.Keys(scripts))
	for _, from := range names {
		for _, sv := range scripts[from].Saves {
			for _, to := range names {
				if to == from {
					continue
				}
				for _, run := range scripts[to].Runs {
					if sameFile(sv.File, run.File) {
						out = append(out, CrossFinding{SaveScript: from, RunScript: to, Save: sv, Run: run})
					}
				}
			}
		}
	}
	return out
}
