// Command skillgate is a skill registry and capability gateway for AI
// agents. This package only wires flags, configuration and output to the
// library packages; the logic lives in skill, discover, registry, catalog
// and store.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// SKILLGATE_CPUPROFILE=FILE writes a CPU profile of the whole run, for
	// performance investigations (go tool pprof FILE).
	if p := os.Getenv("SKILLGATE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			if err := pprof.StartCPUProfile(f); err == nil {
				defer f.Close()
				defer pprof.StopCPUProfile()
			}
		} else {
			fmt.Fprintln(os.Stderr, "skillgate: SKILLGATE_CPUPROFILE:", err)
		}
	}
	m := &Main{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	code := m.Run(ctx, os.Args[1:])
	stop()
	pprof.StopCPUProfile()
	os.Exit(code)
}
