// Command scannereval measures skillgate's content scanner (admission layer
// 4, internal/admission/secscan) on labelled data (issue 31): the malicious
// and benign cases of internal/admission/secscan/testdata/labelled, each
// with its malicious lines in labels.json, and the benign skills of the
// public corpus (../shared/corpus, skipped when absent). It prints recall,
// precision and F1 per class of case and per rule id, the share of benign
// corpus skills with a blocking finding, the files the scanner skipped, and
// the scan time per skill, and exits 1 when a gate is missed. Run it with
// bench/scanner.sh, or:
//
//	go run ./bench/scannereval -labelled internal/admission/secscan/testdata/labelled -corpus ../shared/corpus
//
// A malicious case counts as caught when a blocking (high or critical)
// finding is on one of its labelled lines; a blocking finding elsewhere in
// it is reported ("blocked elsewhere") but not counted.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/admission/secscan"
)

// errSetup is the error of a run that could not start (a bad flag, a
// manifest that does not match its files): exit status 2.
var errSetup = errors.New("set-up failed")

// errGate is a run that measured and missed a gate: exit status 1.
var errGate = errors.New("a gate was missed")

// config is what the flags say.
type config struct {
	labelled, corpus, jsonOut string
	runs                      int
	recallGoal, fpGoal        float64
	verbose                   bool
	// lineage scans with the corpus's skills as references (lineage.go).
	lineage bool
}

func main() {
	var c config
	flag.StringVar(&c.labelled, "labelled", "internal/admission/secscan/testdata/labelled", "the labelled set (a folder with labels.json)")
	flag.StringVar(&c.corpus, "corpus", "", "the public skill corpus (a folder with verdicts.jsonl); empty: $SKILLGATE_CORPUS, else ../shared/corpus when present")
	flag.StringVar(&c.jsonOut, "json-out", "", "also write the results as JSON to this file")
	flag.IntVar(&c.runs, "runs", 3, "timed scans of the corpus (the median total is reported)")
	flag.Float64Var(&c.recallGoal, "recall-goal", 0.90, "gate: share of malicious cases caught with a blocking finding on a labelled line")
	flag.Float64Var(&c.fpGoal, "fp-goal", 0.01, "gate: largest share of benign corpus skills with a blocking finding")
	flag.BoolVar(&c.verbose, "v", false, "also print every case, and every blocked corpus skill with its findings")
	flag.BoolVar(&c.lineage, "lineage", true, "scan with the corpus's skills as lineage references (a corpus skill without itself)")
	flag.Parse()
	err := run(context.Background(), c, os.Stdout)
	switch {
	case errors.Is(err, errGate):
		fmt.Fprintln(os.Stderr, "scannereval:", err)
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, "scannereval:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, c config, w io.Writer) error {
	if c.runs < 1 {
		return fmt.Errorf("%w: -runs must be at least 1", errSetup)
	}
	cases, err := loadLabels(c.labelled)
	if err != nil {
		return err
	}
	res := &results{Set: filepath.Base(filepath.Clean(c.labelled)), RecallGoal: c.recallGoal, FPGoal: c.fpGoal}
	corpus := corpusDir(c.corpus)
	var refs *references
	if c.lineage && corpus != "" {
		if refs, err = loadReferences(corpus); err != nil {
			return err
		}
	}
	for i := range cases {
		if err := scanCase(ctx, c.labelled, &cases[i], refs); err != nil {
			return err
		}
	}
	res.Cases = cases
	if corpus != "" {
		cr, err := scanCorpus(ctx, corpus, c.runs, refs)
		if err != nil {
			return err
		}
		res.Corpus = cr
	}
	res.summarise()
	res.writeText(w, c.verbose)
	if c.jsonOut != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.jsonOut, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("%w: %w", errSetup, err)
		}
	}
	if !res.Gates.Pass() {
		return errGate
	}
	return nil
}

// corpusDir is the corpus to scan: flag, then $SKILLGATE_CORPUS, then
// ../shared/corpus; "" when none holds verdicts.jsonl.
func corpusDir(flagged string) string {
	for _, d := range []string{flagged, os.Getenv("SKILLGATE_CORPUS"), filepath.Join("..", "shared", "corpus")} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "verdicts.jsonl")); err == nil {
			return d
		}
		if d == flagged {
			return "" // named but absent: skipped, and said so in the output
		}
	}
	return ""
}

// medianDuration is the median of ds (which it sorts).
func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// percentile is the p-th percentile (0–100) of sorted ds, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// blocking are the findings of rep that block an install.
func blocking(rep *secscan.Report) []secscan.Finding {
	var out []secscan.Finding
	for _, f := range rep.Findings {
		if f.Severity.Blocks() {
			out = append(out, f)
		}
	}
	return out
}

// ruleIDs are the ids of fs, each once, in order.
func ruleIDs(fs []secscan.Finding) []string {
	var ids []string
	for _, f := range fs {
		if !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	slices.Sort(ids)
	return ids
}

// shortFinding is a finding as the output lists it.
func shortFinding(f secscan.Finding) string {
	return fmt.Sprintf("%s %s %s", f.Rule, f.Severity, f.Location())
}

// joinOr is strings.Join, or "-" for none.
func joinOr(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ", ")
}
