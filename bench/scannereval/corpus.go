package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/skillgate/skillgate/internal/admission/secscan"
)

// blockedSkill is a benign corpus skill with a blocking finding.
type blockedSkill struct {
	Path     string   `json:"path"`
	Findings []string `json:"findings"`
}

// corpusResult is the scan of the benign corpus.
type corpusResult struct {
	Dir    string `json:"dir"`
	Skills int    `json:"skills"`
	// Blocked are the skills with a blocking finding (false positives).
	Blocked []blockedSkill `json:"blocked"`
	// RuleSkills counts, per rule, the skills it blocks.
	RuleSkills map[string]int `json:"rule_skills"`
	// Files read and skipped, and the skipped files by reason.
	Files         int            `json:"files"`
	Skipped       int            `json:"skipped"`
	SkippedReason map[string]int `json:"skipped_by_reason"`
	// Runs is how many times the corpus was scanned; TotalMicros the median
	// of the runs' totals; the per-skill figures are each skill's fastest
	// run.
	Runs        int    `json:"runs"`
	TotalMicros int64  `json:"total_us"`
	MeanMicros  int64  `json:"per_skill_mean_us"`
	P50Micros   int64  `json:"per_skill_p50_us"`
	P99Micros   int64  `json:"per_skill_p99_us"`
	MaxMicros   int64  `json:"per_skill_max_us"`
	MaxSkill    string `json:"per_skill_max_path"`
}

// corpusSkills are the skill folders verdicts.jsonl lists, in its order.
func corpusSkills(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, "verdicts.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSetup, err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var v struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%w: verdicts.jsonl: %w", errSetup, err)
		}
		out = append(out, v.Path)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: verdicts.jsonl: %w", errSetup, err)
	}
	return out, nil
}

// scanCorpus scans every corpus skill runs times: the first run's findings
// are the result (a scan is deterministic), every run is timed.
func scanCorpus(ctx context.Context, dir string, runs int, refs *references) (*corpusResult, error) {
	skills, err := corpusSkills(dir)
	if err != nil {
		return nil, err
	}
	res := &corpusResult{Dir: dir, Skills: len(skills), Blocked: []blockedSkill{}, RuleSkills: map[string]int{}, SkippedReason: map[string]int{}, Runs: runs}
	fastest := make([]time.Duration, len(skills))
	totals := make([]time.Duration, 0, runs)
	for r := range runs {
		var total time.Duration
		for i, s := range skills {
			start := time.Now()
			rep, err := secscan.Dir(ctx, filepath.Join(dir, filepath.FromSlash(s)), secscan.Limits{})
			if err == nil {
				err = refs.apply(filepath.Join(dir, filepath.FromSlash(s)), s, rep)
			}
			d := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			total += d
			if r == 0 || d < fastest[i] {
				fastest[i] = d
			}
			if r == 0 {
				res.record(s, rep)
			}
		}
		totals = append(totals, total)
	}
	res.TotalMicros = medianDuration(totals).Microseconds()
	var sum time.Duration
	for i, d := range fastest {
		sum += d
		if d.Microseconds() > res.MaxMicros {
			res.MaxMicros, res.MaxSkill = d.Microseconds(), skills[i]
		}
	}
	if len(fastest) > 0 {
		res.MeanMicros = (sum / time.Duration(len(fastest))).Microseconds()
	}
	slices.Sort(fastest)
	res.P50Micros = percentile(fastest, 50).Microseconds()
	res.P99Micros = percentile(fastest, 99).Microseconds()
	return res, nil
}

// record adds one skill's report to the result.
func (res *corpusResult) record(path string, rep *secscan.Report) {
	res.Files += rep.Files
	res.Skipped += len(rep.Skipped)
	for _, s := range rep.Skipped {
		res.SkippedReason[s.Reason]++
	}
	bl := blocking(rep)
	if len(bl) == 0 {
		return
	}
	b := blockedSkill{Path: path}
	for _, f := range bl {
		b.Findings = append(b.Findings, shortFinding(f))
	}
	res.Blocked = append(res.Blocked, b)
	for _, id := range ruleIDs(bl) {
		res.RuleSkills[id]++
	}
}
