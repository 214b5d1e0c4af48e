package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// Options say where an [App] keeps its data and how it reports: cmd
// resolves them from flags and the environment.
type Options struct {
	// Data is the data directory (DATA).
	Data string
	// ConfigPath is the configuration file given with --config; "" reads
	// DATA/config.yaml when it exists.
	ConfigPath string
	// Store is the metadata store given with --store; "" falls back to
	// SKILLGATE_STORE, the configuration's store:, then DATA/skillgate.db.
	Store string
	// Getenv reads the environment; nil reads nothing.
	Getenv func(string) string
	// Logger receives what skillgate does; nil discards it.
	Logger *slog.Logger
	// Stderr receives notes for the operator (a file adopted into the
	// store, storage repaired after a crash, a failed rescan of serve);
	// nil discards them.
	Stderr io.Writer
	// Version is skillgate's version, as servers and agents see it.
	Version string
	// IntrospectAs is the principal whose credentials installs, rechecks
	// and approvals introspect servers with (--tenant, --agent); zero:
	// the environment's.
	IntrospectAs credential.Scope
	// NPMRegistry is the npm registry packages are fetched from (--registry
	// of install and update), over config.yaml's.
	NPMRegistry string
}

// App runs skillgate's work for one command. It is not safe for
// concurrent use by several commands; Close releases what it opened.
type App struct {
	opts   Options
	getenv func(string) string
	log    *slog.Logger
	stderr io.Writer
	// shared is the PostgreSQL store opened for its shared documents (see
	// sharedStore); Close closes it.
	shared *postgres.DB
	// steps draws the progress line of installs (see ShowProgress); nil
	// draws nothing.
	steps *stepLine
}

// New returns an App with opts (nil fields take their defaults).
func New(opts Options) *App {
	a := &App{opts: opts, getenv: opts.Getenv, log: opts.Logger, stderr: opts.Stderr}
	if a.getenv == nil {
		a.getenv = func(string) string { return "" }
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.stderr == nil {
		a.stderr = io.Discard
	}
	return a
}

// ShowProgress draws a progress line of the slow steps of installs,
// rechecks and updates (fetching a source or a package, introspecting a
// server, scanning the content) on w when it is a terminal and quiet (JSON
// output) is not set; the line is cleared when the install service is
// closed.
func (a *App) ShowProgress(w io.Writer, quiet bool) {
	if tty, ok := Terminal(w); ok && !quiet {
		a.steps = &stepLine{tty: tty}
	}
}

// EndProgress clears the progress line ShowProgress draws, before the
// command prints its result.
func (a *App) EndProgress() {
	if a.steps != nil {
		a.steps.clear()
	}
}

// Close releases what the App opened for the length of its command.
func (a *App) Close() {
	if a.shared != nil {
		a.shared.Close()
		a.shared = nil
	}
}

// Data is the data directory.
func (a *App) Data() string { return a.opts.Data }

// Logger is the App's logger.
func (a *App) Logger() *slog.Logger { return a.log }

// UsageError marks an error the operator fixes by invoking skillgate
// differently (a flag, an argument, the configuration): cmd exits 2 for it
// and prints Err.
type UsageError struct{ Err error }

// Error is Err's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a [UsageError] with the message of format and args.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// DataIgnore is the .gitignore skillgate writes in a data directory it
// creates: the directory holds credentials.key, tokens.json and the
// database, and is often made inside a user's project (./.skillgate).
const DataIgnore = "# Made by skillgate: nothing in its data directory belongs in version control.\n*\n"

// CreateData makes the data directory (mode 0700) for the commands that
// create it, with a .gitignore ignoring everything in it, so that keys and
// tokens made there are never committed with the project around it. A
// directory that exists is the user's and is left as it is.
func (a *App) CreateData() error {
	dir := a.Data()
	if _, err := os.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(DataIgnore), 0o600); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	return nil
}

// RequireData refuses a data directory that does not exist: a mistyped
// --data must not silently start an empty registry. from says where its
// name came from (--data, $SKILLGATE_DATA, the default) for the usage
// error.
func (a *App) RequireData(from string) error {
	dir := a.Data()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return Usagef("data directory %s (%s) does not exist: run 'skillgate scan' to create a registry there, or give an existing one with --data DIR or SKILLGATE_DATA", dir, from)
}
