package secscan

import (
	"encoding/json"
	"fmt"
)

// SARIF is a scan's findings as a SARIF 2.1.0 log (the OASIS Static
// Analysis Results Interchange Format), which code-scanning tools read:
// one run whose driver lists every rule, one result per finding, located
// relative to the scanned root (uriBaseId SRCROOT), columns in Unicode
// code points. Suppressed findings carry a SARIF suppression with the
// operator's justification. version is skillgate's.
func SARIF(findings []Finding, suppressed map[int]string, version string) ([]byte, error) {
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
		var loc location
		loc.PhysicalLocation.ArtifactLocation = artifact{URI: f.File, URIBaseID: "SRCROOT"}
		loc.PhysicalLocation.Region = region{StartLine: f.Line, StartColumn: f.Column, Snippet: text{f.Excerpt}}
		res.Locations = []location{loc}
		if why, ok := suppressed[i]; ok {
			res.Suppressions = []suppression{{Kind: "external", Status: "accepted", Justification: why}}
		}
		results = append(results, res)
	}
	log := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool": map[string]any{"driver": map[string]any{
				"name": "skillgate", "informationUri": "https://github.com/skillgate/skillgate",
				"version": version, "rules": rules,
			}},
			"columnKind": "unicodeCodePoints",
			"results":    results,
		}},
	}
	return json.MarshalIndent(log, "", "  ")
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
