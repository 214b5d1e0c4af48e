package secscan

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/skillgate/skillgate/internal/admission/lineage"
)

// SARIF is a scan's findings as a SARIF 2.1.0 log (the OASIS Static
// Analysis Results Interchange Format), which code-scanning tools read:
// one run whose driver lists every rule, one result per finding, located
// relative to the scanned root (uriBaseId SRCROOT), columns in Unicode
// code points. Suppressed findings carry a SARIF suppression with the
// operator's justification. A result whose rule matched normalised or
// decoded text carries it as properties.normalized. version is
// skillgate's.
func SARIF(findings []Finding, suppressed map[int]string, version string) ([]byte, error) {
	return SARIFWithLineage(findings, suppressed, nil, version)
}

// SARIFWithLineage is SARIF for a scan whose skill is derived from a
// reference skill (d, when not nil): the run's properties.lineage carries
// the derivation (from, origin, trusted, score, the counts of identical,
// changed, added and removed files, the summary line, each changed file
// with its added or changed lines, and the added and removed files), and
// a result on a line the skill added (an added or changed line of a
// changed file, or any line of an added file) carries
// properties.addedLine true and properties.derivedFrom, the reference.
// The diffs themselves are not repeated: the review holds them.
func SARIFWithLineage(findings []Finding, suppressed map[int]string, d *lineage.Derivation, version string) ([]byte, error) {
	type text struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID                   string         `json:"id"`
		Name                 string         `json:"name"`
		ShortDescription     text           `json:"shortDescription"`
		FullDescription      text           `json:"fullDescription"`
		Help                 text           `json:"help"`
		DefaultConfiguration map[string]any `json:"defaultConfiguration"`
		Properties           map[string]any `json:"properties"`
	}
	type region struct {
		StartLine   int  `json:"startLine"`
		StartColumn int  `json:"startColumn"`
		Snippet     text `json:"snippet"`
	}
	type artifact struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation artifact `json:"artifactLocation"`
			Region           region   `json:"region"`
		} `json:"physicalLocation"`
	}
	type suppression struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		Justification string `json:"justification"`
	}
	type result struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             text              `json:"message"`
		Locations           []location        `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
		Properties          map[string]any    `json:"properties"`
		Suppressions        []suppression     `json:"suppressions,omitempty"`
	}
	rules := make([]rule, len(Rules))
	index := map[string]int{}
	for i, r := range Rules {
		index[r.ID] = i
		rules[i] = rule{
			ID: r.ID, Name: r.Name,
			ShortDescription:     text{r.Title},
			FullDescription:      text{r.Why},
			Help:                 text{r.Fix},
			DefaultConfiguration: map[string]any{"level": level(r.Severity)},
			Properties:           map[string]any{"tags": []string{"security"}, "security-severity": securitySeverity(r.Severity), "precision": "medium"},
		}
	}
	results := make([]result, 0, len(findings))
	for i, f := range findings {
		res := result{
			RuleID: f.Rule, RuleIndex: index[f.Rule], Level: level(f.Severity),
			Message:             text{fmt.Sprintf("%s: %s. %s", f.Name, f.Message, f.Fix)},
			PartialFingerprints: map[string]string{"skillgateExcerpt/v1": f.Rule + ":" + f.File + ":" + f.Excerpt},
			Properties:          map[string]any{"severity": string(f.Severity)},
		}
		if f.Normalized != "" {
			res.Properties["normalized"] = f.Normalized
		}
		if onAddedLine(d, f) {
			res.Properties["addedLine"] = true
			res.Properties["derivedFrom"] = d.From
		}
		var loc location
		loc.PhysicalLocation.ArtifactLocation = artifact{URI: f.File, URIBaseID: "SRCROOT"}
		loc.PhysicalLocation.Region = region{StartLine: f.Line, StartColumn: f.Column, Snippet: text{f.Excerpt}}
		res.Locations = []location{loc}
		if why, ok := suppressed[i]; ok {
			res.Suppressions = []suppression{{Kind: "external", Status: "accepted", Justification: why}}
		}
		results = append(results, res)
	}
	run := map[string]any{
		"tool": map[string]any{"driver": map[string]any{
			"name": "skillgate", "informationUri": "https://github.com/skillgate/skillgate",
			"version": version, "rules": rules,
		}},
		"columnKind": "unicodeCodePoints",
		"results":    results,
	}
	if d != nil {
		run["properties"] = map[string]any{"lineage": sarifLineage(d)}
	}
	log := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs":    []any{run},
	}
	return json.MarshalIndent(log, "", "  ")
}

// onAddedLine reports whether f is on a line the skill added to the
// reference it is derived from: an added or changed line of a changed
// file, or any line of an added file.
func onAddedLine(d *lineage.Derivation, f Finding) bool {
	if d == nil {
		return false
	}
	if _, ok := slices.BinarySearch(d.Added, f.File); ok {
		return true
	}
	for _, c := range d.Changed {
		if c.Path == f.File {
			return slices.Contains(c.AddedLines, f.Line)
		}
	}
	return false
}

// sarifLineage is a derivation as a SARIF run property.
func sarifLineage(d *lineage.Derivation) map[string]any {
	type changed struct {
		Path       string `json:"path"`
		AddedLines []int  `json:"addedLines"`
		Truncated  bool   `json:"truncated,omitempty"`
		Replaced   bool   `json:"replaced,omitempty"`
	}
	files := make([]changed, 0, len(d.Changed))
	for _, c := range d.Changed {
		lines := c.AddedLines
		if lines == nil {
			lines = []int{}
		}
		files = append(files, changed{Path: c.Path, AddedLines: lines, Truncated: c.Truncated, Replaced: c.Replaced})
	}
	orEmpty := func(xs []string) []string {
		if xs == nil {
			return []string{}
		}
		return xs
	}
	return map[string]any{
		"from": d.From, "origin": d.Origin, "trusted": d.Trusted, "score": d.Score,
		"summary":   d.Summary(),
		"identical": len(d.Identical), "changed": len(d.Changed), "added": len(d.Added), "removed": len(d.Removed),
		"changedFiles": files, "addedFiles": orEmpty(d.Added), "removedFiles": orEmpty(d.Removed),
	}
}

// level is SARIF's level for a severity.
func level(s Severity) string {
	switch s {
	case Critical, High:
		return "error"
	case Medium:
		return "warning"
	}
	return "note"
}

// securitySeverity is the score code-scanning tools rank security results
// by (critical above 9, high 7 to 8.9, medium 4 to 6.9, low below 4).
func securitySeverity(s Severity) string {
	switch s {
	case Critical:
		return "9.5"
	case High:
		return "8.0"
	case Medium:
		return "5.5"
	}
	return "2.0"
}
