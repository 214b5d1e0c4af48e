package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/admission/secscan"
)

// labelledLine is one malicious line of a case: a file of the case and a
// 1-based line.
type labelledLine struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// labelledCase is one entry of labels.json, and what the scan found in it.
type labelledCase struct {
	Path      string         `json:"path"`
	Class     string         `json:"class"`
	Malicious bool           `json:"malicious"`
	What      string         `json:"what"`
	Lines     []labelledLine `json:"lines,omitempty"`
	Source    string         `json:"source,omitempty"`
	Licence   string         `json:"licence,omitempty"`

	// Caught: a blocking finding on a labelled line (malicious cases).
	Caught bool `json:"caught"`
	// Blocked: a blocking finding anywhere in the case.
	Blocked bool `json:"blocked"`
	// Seen: any finding, of any severity, on a labelled line.
	Seen bool `json:"seen"`
	// CaughtBy are the rules with a blocking finding on a labelled line;
	// BlockedBy the rules with a blocking finding anywhere.
	CaughtBy  []string          `json:"caught_by"`
	BlockedBy []string          `json:"blocked_by"`
	Findings  []string          `json:"findings"`
	Skipped   []secscan.Skipped `json:"skipped"`
	Micros    int64             `json:"scan_us"`
}

// loadLabels reads dir/labels.json and checks it against the folders: every
// case folder exists and holds a SKILL.md, every labelled line is in its
// file, a malicious case has lines, and every folder of a case is labelled.
func loadLabels(dir string) ([]labelledCase, error) {
	data, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSetup, err)
	}
	var doc struct {
		Cases []labelledCase `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errSetup, filepath.Join(dir, "labels.json"), err)
	}
	if len(doc.Cases) == 0 {
		return nil, fmt.Errorf("%w: %s labels no case", errSetup, dir)
	}
	seen := map[string]bool{}
	for _, c := range doc.Cases {
		if err := checkCase(dir, c); err != nil {
			return nil, err
		}
		seen[c.Path] = true
	}
	for _, top := range []string{"malicious", "benign-extra"} {
		classes, _ := os.ReadDir(filepath.Join(dir, top))
		for _, cl := range classes {
			folders, _ := os.ReadDir(filepath.Join(dir, top, cl.Name()))
			for _, f := range folders {
				if p := top + "/" + cl.Name() + "/" + f.Name(); !seen[p] {
					return nil, fmt.Errorf("%w: %s is not in labels.json", errSetup, p)
				}
			}
		}
	}
	return doc.Cases, nil
}

func checkCase(dir string, c labelledCase) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: labels.json: %s: %s", errSetup, c.Path, fmt.Sprintf(format, a...))
	}
	if c.Class == "" || c.What == "" {
		return bad("class and what are required")
	}
	wantTop := "benign-extra/"
	if c.Malicious {
		wantTop = "malicious/"
	}
	if !strings.HasPrefix(c.Path, wantTop+c.Class+"/") {
		return bad("a %s case of class %s belongs under %s%s/", map[bool]string{true: "malicious", false: "benign"}[c.Malicious], c.Class, wantTop, c.Class)
	}
	if _, err := os.Stat(filepath.Join(dir, c.Path, "SKILL.md")); err != nil {
		return bad("no SKILL.md: %v", err)
	}
	if c.Malicious != (len(c.Lines) > 0) {
		return bad("a malicious case has labelled lines, a benign one none")
	}
	for _, l := range c.Lines {
		data, err := os.ReadFile(filepath.Join(dir, c.Path, filepath.FromSlash(l.File)))
		if err != nil {
			return bad("%v", err)
		}
		if n := bytes.Count(data, []byte("\n")) + 1; l.Line < 1 || l.Line > n {
			return bad("%s has %d lines, not line %d", l.File, n, l.Line)
		}
	}
	return nil
}

// scanCase scans one case and records what was found on its labelled lines.
func scanCase(ctx context.Context, dir string, c *labelledCase, refs *references) error {
	start := time.Now()
	rep, err := secscan.Dir(ctx, filepath.Join(dir, c.Path), secscan.Limits{})
	if err == nil {
		err = refs.apply(filepath.Join(dir, c.Path), "", rep)
	}
	c.Micros = time.Since(start).Microseconds()
	if err != nil {
		return fmt.Errorf("%s: %w", c.Path, err)
	}
	c.Skipped = rep.Skipped
	c.Findings, c.CaughtBy, c.BlockedBy = []string{}, []string{}, []string{}
	for _, f := range rep.Findings {
		c.Findings = append(c.Findings, shortFinding(f))
		onLine := slices.Contains(c.Lines, labelledLine{f.File, f.Line})
		c.Seen = c.Seen || onLine
		if !f.Severity.Blocks() {
			continue
		}
		c.Blocked = true
		if !slices.Contains(c.BlockedBy, f.Rule) {
			c.BlockedBy = append(c.BlockedBy, f.Rule)
		}
		if onLine && !slices.Contains(c.CaughtBy, f.Rule) {
			c.Caught = true
			c.CaughtBy = append(c.CaughtBy, f.Rule)
		}
	}
	slices.Sort(c.CaughtBy)
	slices.Sort(c.BlockedBy)
	return nil
}
