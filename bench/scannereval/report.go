package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/skillgate/skillgate/internal/admission/secscan"
)

// score is precision, recall and F1; nil where undefined (nothing found,
// or nothing to find).
type score struct {
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
}

func ratio(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	v := float64(num) / float64(den)
	return &v
}

// scoreOf scores tp true positives against fp false positives and pos
// positives in all.
func scoreOf(tp, fp, pos int) score {
	s := score{Precision: ratio(tp, tp+fp), Recall: ratio(tp, pos)}
	if s.Precision != nil && s.Recall != nil && *s.Precision+*s.Recall > 0 {
		f := 2 * *s.Precision * *s.Recall / (*s.Precision + *s.Recall)
		s.F1 = &f
	}
	return s
}

// classRow is one class of case: its malicious cases caught (a blocking
// finding on a labelled line), blocked only elsewhere, seen at any
// severity; its benign look-alikes blocked (false positives).
type classRow struct {
	Class            string `json:"class"`
	Malicious        int    `json:"malicious"`
	Caught           int    `json:"caught"`
	BlockedElsewhere int    `json:"blocked_elsewhere"`
	Seen             int    `json:"seen"`
	Benign           int    `json:"benign"`
	BenignBlocked    int    `json:"benign_blocked"`
	score
}

// ruleRow is one rule: the malicious cases it catches (a blocking finding
// of it on a labelled line) and blocks only elsewhere, the benign
// look-alikes and corpus skills it blocks. Its recall is the share of all
// malicious cases it catches.
type ruleRow struct {
	Rule             string `json:"rule"`
	Name             string `json:"name"`
	Caught           int    `json:"caught"`
	BlockedElsewhere int    `json:"blocked_elsewhere"`
	FPExtra          int    `json:"fp_benign_extra"`
	FPCorpus         int    `json:"fp_corpus"`
	score
}

// gates are the acceptance figures of issue 31.
type gates struct {
	Recall     float64  `json:"recall"`
	RecallPass bool     `json:"recall_pass"`
	FPRate     *float64 `json:"corpus_blocked_rate"`
	FPPass     bool     `json:"corpus_blocked_pass"`
}

// Pass reports whether every gate is met (the corpus one only when the
// corpus was scanned).
func (g gates) Pass() bool { return g.RecallPass && g.FPPass }

// results is everything a run measured.
type results struct {
	// Set is the set's folder name: "labelled", or "holdout" (held out,
	// never tuned on).
	Set        string         `json:"set"`
	RecallGoal float64        `json:"recall_goal"`
	FPGoal     float64        `json:"corpus_blocked_goal"`
	Cases      []labelledCase `json:"cases"`
	Corpus     *corpusResult  `json:"corpus"`
	Classes    []classRow     `json:"classes"`
	All        classRow       `json:"all"`
	Rules      []ruleRow      `json:"rules"`
	Gates      gates          `json:"gates"`
}

// summarise fills the class and rule tables and the gates from the cases
// and the corpus.
func (res *results) summarise() {
	byClass := map[string]*classRow{}
	byRule := map[string]*ruleRow{}
	for _, r := range secscan.Rules {
		byRule[r.ID] = &ruleRow{Rule: r.ID, Name: r.Name}
	}
	rule := func(id string) *ruleRow {
		if byRule[id] == nil {
			byRule[id] = &ruleRow{Rule: id}
		}
		return byRule[id]
	}
	res.All.Class = "all"
	for _, c := range res.Cases {
		row := byClass[c.Class]
		if row == nil {
			row = &classRow{Class: c.Class}
			byClass[c.Class] = row
		}
		for _, r := range []*classRow{row, &res.All} {
			r.add(c)
		}
		switch {
		case c.Malicious:
			for _, id := range c.CaughtBy {
				rule(id).Caught++
			}
			for _, id := range c.BlockedBy {
				if !slices.Contains(c.CaughtBy, id) {
					rule(id).BlockedElsewhere++
				}
			}
		default:
			for _, id := range c.BlockedBy {
				rule(id).FPExtra++
			}
		}
	}
	fpCorpus := 0
	if res.Corpus != nil {
		for id, n := range res.Corpus.RuleSkills {
			rule(id).FPCorpus += n
		}
		fpCorpus = len(res.Corpus.Blocked)
	}
	for _, row := range byClass {
		row.score = scoreOf(row.Caught, row.BenignBlocked, row.Malicious)
		res.Classes = append(res.Classes, *row)
	}
	slices.SortFunc(res.Classes, func(a, b classRow) int { return strings.Compare(a.Class, b.Class) })
	res.All.score = scoreOf(res.All.Caught, res.All.BenignBlocked+fpCorpus, res.All.Malicious)
	for _, row := range byRule {
		row.score = scoreOf(row.Caught, row.FPExtra+row.FPCorpus, res.All.Malicious)
		res.Rules = append(res.Rules, *row)
	}
	slices.SortFunc(res.Rules, func(a, b ruleRow) int { return strings.Compare(a.Rule, b.Rule) })
	if res.All.Recall != nil {
		res.Gates.Recall = *res.All.Recall
	}
	res.Gates.RecallPass = res.Gates.Recall >= res.RecallGoal
	if res.Corpus != nil {
		res.Gates.FPRate = ratio(fpCorpus, res.Corpus.Skills)
		res.Gates.FPPass = res.Gates.FPRate != nil && *res.Gates.FPRate <= res.FPGoal
	}
}

func (r *classRow) add(c labelledCase) {
	if !c.Malicious {
		r.Benign++
		if c.Blocked {
			r.BenignBlocked++
		}
		return
	}
	r.Malicious++
	switch {
	case c.Caught:
		r.Caught++
	case c.Blocked:
		r.BlockedElsewhere++
	}
	if c.Seen {
		r.Seen++
	}
}

// pct writes a share as a percentage with one decimal, "-" when
// undefined.
func pct(v *float64) string { return pctN(v, 1) }

// pctN writes a share as a percentage with n decimals, "-" when undefined.
func pctN(v *float64, n int) string {
	if v == nil || math.IsNaN(*v) {
		return "-"
	}
	return fmt.Sprintf("%.*f %%", n, 100**v)
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// writeText prints the tables for a person.
func (res *results) writeText(w io.Writer, verbose bool) {
	mal := res.All.Malicious
	fmt.Fprintf(w, "content scanner (admission layer 4) on the %s set: %d cases, %d malicious, %d benign look-alikes\n\n", res.Set, len(res.Cases), mal, res.All.Benign)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "class\tmalicious\tcaught\tblocked elsewhere\tseen (any severity)\tbenign\tbenign blocked\tprecision\trecall\tF1")
	for _, r := range append(slices.Clone(res.Classes), res.All) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Class, r.Malicious, r.Caught, r.BlockedElsewhere, r.Seen, r.Benign, r.BenignBlocked, pct(r.Precision), pct(r.Recall), pct(r.F1))
	}
	tw.Flush()
	fmt.Fprintln(w, "(caught: a blocking finding on a labelled line; the \"all\" row's precision also counts the blocked corpus skills)")
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "rule\tname\tcaught\tblocked elsewhere\tFP look-alikes\tFP corpus skills\tprecision\trecall\tF1")
	for _, r := range res.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Rule, r.Name, r.Caught, r.BlockedElsewhere, r.FPExtra, r.FPCorpus, pct(r.Precision), pct(r.Recall), pct(r.F1))
	}
	tw.Flush()
	fmt.Fprintf(w, "(a rule's recall is the share of all %d malicious cases it catches)\n\n", mal)
	res.writeFiles(w)
	res.writeCorpus(w, verbose)
	if verbose {
		res.writeCases(w)
	}
	res.writeGates(w)
}

func (res *results) writeFiles(w io.Writer) {
	var skipped []string
	for _, c := range res.Cases {
		for _, s := range c.Skipped {
			skipped = append(skipped, fmt.Sprintf("  %s/%s: %s", c.Path, s.File, s.Reason))
		}
	}
	fmt.Fprintf(w, "%s set: %d files skipped\n", res.Set, len(skipped))
	for _, s := range skipped {
		fmt.Fprintln(w, s)
	}
}

func (res *results) writeCorpus(w io.Writer, verbose bool) {
	c := res.Corpus
	if c == nil {
		fmt.Fprintf(w, "benign corpus: absent (set SKILLGATE_CORPUS or -corpus); skipped\n\n")
		return
	}
	fmt.Fprintf(w, "benign corpus %s: %d skills, %d with a blocking finding (%s), %d files read, %d skipped", c.Dir, c.Skills, len(c.Blocked), pctN(res.Gates.FPRate, 2), c.Files, c.Skipped)
	reasons := make([]string, 0, len(c.SkippedReason))
	for r, n := range c.SkippedReason {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
	}
	slices.Sort(reasons)
	if len(reasons) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(reasons, "; "))
	}
	fmt.Fprintln(w)
	for _, b := range c.Blocked {
		if verbose {
			fmt.Fprintf(w, "  blocked: %s: %s\n", b.Path, joinOr(b.Findings))
		} else {
			fmt.Fprintf(w, "  blocked: %s\n", b.Path)
		}
	}
	fmt.Fprintf(w, "scan time: whole corpus %.1f ms (median of %d runs); per skill mean %d µs, p50 %d µs, p99 %d µs, max %d µs (%s)\n\n",
		float64(c.TotalMicros)/1000, c.Runs, c.MeanMicros, c.P50Micros, c.P99Micros, c.MaxMicros, c.MaxSkill)
}

func (res *results) writeCases(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tcaught by\tblocked by\tfindings")
	for _, c := range res.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Path, joinOr(c.CaughtBy), joinOr(c.BlockedBy), joinOr(c.Findings))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func (res *results) writeGates(w io.Writer) {
	fmt.Fprintf(w, "gate: malicious cases caught %s (goal ≥ %.0f %%): %s\n", pct(&res.Gates.Recall), 100*res.RecallGoal, passFail(res.Gates.RecallPass))
	if res.Gates.FPRate == nil {
		fmt.Fprintf(w, "gate: benign corpus skills blocked: not measured (no corpus): FAIL\n")
		return
	}
	fmt.Fprintf(w, "gate: benign corpus skills blocked %s (goal ≤ %.0f %%): %s\n", pctN(res.Gates.FPRate, 2), 100*res.FPGoal, passFail(res.Gates.FPPass))
}
