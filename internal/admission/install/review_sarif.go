package install

import "github.com/skillgate/skillgate/internal/admission/secscan"

// SARIF is the review's content scan (layer 4) as a SARIF 2.1.0 log, as
// 'skillgate review --sarif' prints it: every finding, a suppressed one
// with the operator's decision ("BY: WHY") as its justification, and,
// when the skill is derived from a reference skill, the derivation in the
// run's properties and addedLine on the results of the lines it added
// (secscan.SARIFWithLineage). A review without a scan gives a log with no
// results. version is skillgate's.
func (r *Review) SARIF(version string) ([]byte, error) {
	if r.Scan == nil {
		return secscan.SARIF(nil, nil, version)
	}
	findings := make([]secscan.Finding, len(r.Scan.Findings))
	suppressed := map[int]string{}
	for i, f := range r.Scan.Findings {
		findings[i] = f.Finding
		if f.Suppressed != nil {
			suppressed[i] = f.Suppressed.By + ": " + f.Suppressed.Why
		}
	}
	return secscan.SARIFWithLineage(findings, suppressed, r.Scan.Lineage, version)
}
