// Command skillgate is a skill registry and capability gateway for AI
// agents. This package is the wiring: commands, flags, help, the choice of
// JSON or text, and exit codes. What a command does (checking and parsing
// its flags' values, the configuration, the store, the registry and
// capability runtime, the serve loop, replicas, checkpoints, session
// maintenance) is internal/app's, over the library packages; a result's
// text renders beside its type.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// stopGrace is how long an orderly stop may take after the first SIGINT or
// SIGTERM before skillgate exits anyway: a command blocked where it cannot
// see the cancellation must not keep the process alive.
const stopGrace = 5 * time.Second

func main() {
	sandboxHelper(os.Args)
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go exitOnSignal(sigs, cancel, stopGrace, os.Stderr, os.Exit)
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
	// SKILLGATE_MEMPROFILE=FILE writes a heap profile taken when the heap
	// in use was highest (see app.WriteHeapProfiles).
	stopHeap := func() {}
	if p := os.Getenv("SKILLGATE_MEMPROFILE"); p != "" {
		stopHeap = app.WriteHeapProfiles(ctx, p, os.Stderr)
	}
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	code := m.Run(ctx, os.Args[1:])
	cancel()
	stopHeap()
	pprof.StopCPUProfile()
	os.Exit(code)
}

// exitOnSignal cancels the run on the first signal from sigs, then exits
// with 128+signal number when the run has not ended grace later, or at once
// on a second signal.
func exitOnSignal(sigs <-chan os.Signal, cancel context.CancelFunc, grace time.Duration, stderr io.Writer, exit func(int)) {
	sig, ok := <-sigs
	if !ok {
		return
	}
	cancel()
	code := 128 + signalNumber(sig)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
		fmt.Fprintf(stderr, "skillgate: %v: still stopping after %v; exiting\n", sig, grace)
	case sig = <-sigs:
		fmt.Fprintf(stderr, "skillgate: %v again; exiting at once\n", sig)
	}
	exit(code)
}

// signalNumber is the number of a termination signal (2 for SIGINT).
func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return int(syscall.SIGINT)
}

// sandboxHelper runs the sandbox's helper when args name it (skillgate
// sandbox-exec, hidden: only bubblewrap runs it): inside a sandbox, before
// a confined server starts, it applies the server's limits and Landlock
// ruleset and then becomes the server. It returns only when args name
// another command.
func sandboxHelper(args []string) {
	if len(args) < 2 || args[1] != sandbox.HelperCommand {
		return
	}
	err := sandbox.Exec(args[2:], os.Environ())
	fmt.Fprintln(os.Stderr, "skillgate "+sandbox.HelperCommand+":", err)
	os.Exit(126)
}
