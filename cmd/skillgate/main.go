// Command skillgate is a skill registry and capability gateway for AI
// agents. This package only wires flags, configuration and output to the
// library packages; the logic lives in skill, discover, registry, catalog
// and store.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := &Main{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	code := m.Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
