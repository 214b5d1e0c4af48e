package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExitOnSignal(t *testing.T) {
	tests := []struct {
		name     string
		signals  []os.Signal
		grace    time.Duration
		wantCode int
		wantErr  string
	}{
		{"grace runs out", []os.Signal{syscall.SIGTERM}, time.Millisecond, 143, "skillgate: terminated: still stopping after 1ms; exiting\n"},
		{"second signal", []os.Signal{os.Interrupt, os.Interrupt}, time.Hour, 130, "skillgate: interrupt again; exiting at once\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sigs := make(chan os.Signal, len(tt.signals))
			for _, s := range tt.signals {
				sigs <- s
			}
			var stderr strings.Builder
			code := -1
			exitOnSignal(sigs, cancel, tt.grace, &stderr, func(c int) { code = c })
			if ctx.Err() == nil {
				t.Error("the run was not cancelled")
			}
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d", code, tt.wantCode)
			}
			if stderr.String() != tt.wantErr {
				t.Errorf("stderr = %q, want %q", stderr.String(), tt.wantErr)
			}
		})
	}
}
