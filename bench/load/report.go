package main

import (
	"fmt"
	"io"
	"time"
)

// quantile returns the q-quantile of sorted samples (0 when empty).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// Checks are the report's goals and correctness checks, in order.
func (r *Report) Checks() []Check {
	errs := 0
	for _, n := range r.Errors {
		errs += n
	}
	page := r.Latency["skill_list page"]
	return []Check{
		{"all agents connected", ms(r.ConnectAll), "< 2 s", len(r.Latency["connect"]) == r.Agents && r.ConnectAll < GoalConnectAll},
		{"skill_list page p99", ms(quantile(page, 0.99)), "< 20 ms", len(page) > 0 && quantile(page, 0.99) < GoalPageP99},
		{"server peak RSS", fmt.Sprintf("%.0f MB", float64(r.PeakRSS)/(1<<20)), "< 500 MB", r.PeakRSS > 0 && r.PeakRSS < GoalRSSBytes},
		{"errors", fmt.Sprint(errs), "0", errs == 0},
		{"audit records = capability calls", fmt.Sprintf("%d / %d", r.AuditCalls, r.CapCalls), "equal", r.AuditCalls == r.CapCalls && r.CapCalls > 0},
		{"skillgate audit verify", r.AuditVerify, "passes", r.AuditOK},
	}
}

// Check is one line of the verdict.
type Check struct {
	Name, Got, Goal string
	OK              bool
}

// Pass reports whether every goal and check holds.
func (r *Report) Pass() bool {
	for _, c := range r.Checks() {
		if !c.OK {
			return false
		}
	}
	return true
}

// Correct reports whether the checks that do not depend on the machine's
// speed hold: every agent connected, no error, nothing lost from the audit
// log, and the log verifies. The small-scale test asserts these only.
func (r *Report) Correct() bool {
	for _, c := range r.Checks() {
		switch c.Name {
		case "errors", "audit records = capability calls", "skillgate audit verify":
			if !c.OK {
				return false
			}
		}
	}
	return len(r.Latency["connect"]) == r.Agents
}

// Print writes the tables.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "\nskillgate load test: %d agents over streamable HTTP, %d generated skills, loopback (wall %s)\n", r.Agents, r.Skills, r.Wall.Round(time.Second))
	think := "none: every agent calls without pause (saturation)"
	if r.Think > 0 {
		think = fmt.Sprintf("%s mean before each call (uniform %s–%s)", r.Think, r.Think/2, r.Think*3/2)
	}
	fmt.Fprintf(w, "think time: %s\n", think)
	fmt.Fprintf(w, "skill_list pages read: %d (one agent listed at most %d skills)\n\n", r.Pages, r.Listed)
	fmt.Fprintf(w, "| operation | n | p50 | p99 | max | errors |\n|---|---|---|---|---|---|\n")
	for _, op := range Ops {
		l := r.Latency[op]
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %d |\n", op, len(l), ms(quantile(l, 0.5)), ms(quantile(l, 0.99)), ms(quantile(l, 1)), r.Errors[op])
	}
	fmt.Fprintf(w, "\n| check | measured | goal | result |\n|---|---|---|---|\n")
	for _, c := range r.Checks() {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Name, c.Got, c.Goal, verdict(c.OK))
	}
	for _, e := range r.ErrorText {
		fmt.Fprintln(w, "error:", e)
	}
}
