package app

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/platform/termtext"
)

// Steps is a one-line status of long work (an install's fetch and
// analysis, the installs of 'skillgate add') drawn on a terminal and
// cleared before the command prints its results: a person sees what is
// happening, and a pipe, a file or --json output gets nothing. A nil
// *Steps draws nothing, so callers need not check. It is safe for
// concurrent use.
type Steps struct {
	mu    sync.Mutex
	tty   *os.File
	start time.Time
	shown bool
}

// StepProgress returns the Steps drawn on w when w is a terminal and
// quiet (JSON output) is not set, else nil.
func StepProgress(w io.Writer, quiet bool) *Steps {
	tty, ok := Terminal(w)
	if !ok || quiet {
		return nil
	}
	return &Steps{tty: tty, start: time.Now()}
}

// Show replaces the status line with the message of format and args,
// and the time since the work started; args from outside (a repository's
// URL, a skill's name) are rendered by termtext so that they cannot
// move the cursor or hide text.
func (s *Steps) Show(format string, args ...any) {
	if s == nil {
		return
	}
	for i, a := range args {
		if str, ok := a.(string); ok {
			args[i] = termtext.Escape(str)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.tty, "\r\033[K%s (%s)", fmt.Sprintf(format, args...), time.Since(s.start).Round(time.Second))
	s.shown = true
}

// Clear removes the status line, before the command prints a result.
func (s *Steps) Clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprint(s.tty, "\r\033[K")
		s.shown = false
	}
}
