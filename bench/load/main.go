// Command load is skillgate's whole-system load test (issue 12's
// acceptance): N agents over streamable HTTP against `skillgate serve` on
// a registry of S generated skills, on loopback only, bounded in count and
// time. Run it with bench/load.sh, or:
//
//	go run ./bench/load [-agents 100] [-skills 10000] [-think 1s] [-timeout 10m] [-json FILE]
//
// It builds skillgate (or takes -skillgate BIN), generates the registry
// with bench/gen and scans it, installs, approves and enables one imported
// skill whose capabilities come from the npm server-filesystem, writes a
// Cedar policy allowing reads, adds a token per agent and starts `skillgate
// serve` on 127.0.0.1. Then every agent at once connects and, pausing
// before each call as a model's turn would (-think), pages through
// skill_list (following next_cursor in the structured content when the
// server pages, else taking the single result), loads a skill, reads its
// SKILL.md, greps it, and calls the capability read_text_file. It measures
// the time until all agents are connected, each operation's p50/p99, the
// server's peak RSS (VmHWM from /proc) and the errors; after the server
// has stopped it checks that the audit log holds exactly one
// capability.invoke record per capability call made, and that `skillgate
// audit verify` passes. It prints a table with the goals and PASS/FAIL.
//
// Exit status: 0 when every goal and check holds, 1 when one fails, 2 on a
// set-up error. Needs Go, Node.js and the npm servers
// (SKILLGATE_TEST_NPM_DIR, see scripts/setup-npm.sh).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	cfg := Config{}
	flag.IntVar(&cfg.Agents, "agents", 100, "concurrent agents")
	flag.IntVar(&cfg.Skills, "skills", 10000, "generated skills in the registry")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "bound on the whole run")
	flag.StringVar(&cfg.Skillgate, "skillgate", os.Getenv("SKILLGATE_BIN"), "skillgate binary to run (default: build ./cmd/skillgate)")
	flag.StringVar(&cfg.Work, "work", "", "work directory (default: a new temporary directory, removed at the end)")
	flag.DurationVar(&cfg.Think, "think", time.Second, "mean pause before each of an agent's calls (the model's turn), drawn uniformly from [think/2, 3·think/2]; 0: no pause, every agent at once (a saturation test)")
	flag.StringVar(&cfg.GenDir, "gen-dir", "", "where the generated registry is kept and reused (default: $TMPDIR/skillgate-load-skills-nN)")
	jsonOut := flag.String("json", "", "also write the report as JSON to this file")
	flag.Parse()
	if cfg.Agents < 1 || cfg.Agents > 1000 || cfg.Skills < 1 || cfg.Skills > 200000 || cfg.Think < 0 || cfg.Think > time.Minute {
		fmt.Fprintln(os.Stderr, "load: -agents must be 1..1000, -skills 1..200000 and -think 0..1m")
		os.Exit(2)
	}
	cfg.NPMDir = os.Getenv("SKILLGATE_TEST_NPM_DIR")
	cfg.Log = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		if errors.Is(err, ErrSetup) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	rep.Print(os.Stdout)
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(2)
		}
	}
	if !rep.Pass() {
		os.Exit(1)
	}
}
