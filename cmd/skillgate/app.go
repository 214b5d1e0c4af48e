package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/platform/termtext"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// Exit codes, documented in docs/cli.md.
const (
	exitOK    = 0
	exitFail  = 1 // invalid skills, drift, not found, operational errors
	exitUsage = 2 // bad flags or arguments
)

// Main runs the CLI with injectable I/O, so tests drive the real wiring.
type Main struct {
	// Stdin is read by commands that take a secret (credential set); nil
	// means os.Stdin.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment; tests pass a map's lookup.
	Getenv func(string) string

	dataDir    string
	configPath string
	// storeFlag is --store: the metadata store (see storeLocation).
	storeFlag string
	verbose   bool
	// introspectAs is the principal whose credentials install, recheck
	// and approve introspect with (--tenant, --agent); zero: the
	// environment's.
	introspectAs credential.Scope
	// npmRegistry is --registry of install and update: the npm registry
	// packages are fetched from, over config.yaml's.
	npmRegistry string
	// a is the application of the command being run, made once its flags
	// are read (see app); Run closes it.
	a *app.App
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr is an error the user fixes by invoking skillgate differently:
// exit code 2.
func usageErr(format string, args ...any) error { return app.Usagef(format, args...) }

// failed is returned when the command printed its own findings and only
// the exit code remains to be set.
var errFailed = &exitError{code: exitFail, err: errors.New("")}

// Run executes one command line and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	root := m.rootCommand()
	defer m.renderOutput(root, args)()
	root.SetArgs(args)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	defer func() {
		if m.a != nil {
			m.a.Close()
			m.a = nil
		}
	}()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err.Error() != "" {
			fmt.Fprintln(m.Stderr, "Error:", ee.err)
		}
		return ee.code
	}
	var ue *app.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(m.Stderr, "Error:", ue.Err)
		return exitUsage
	}
	fmt.Fprintln(m.Stderr, "Error:", err)
	if strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "flag") || strings.Contains(err.Error(), "arg(s)") {
		return exitUsage
	}
	return exitFail
}

// renderOutput routes the command's stdout and stderr through
// termtext.Writer for the length of the run, so that no text from outside
// (a server's name, a tool's description, a SKILL.md field, an error
// quoting them) reaches the terminal with a control, bidi or other
// invisible character: every command's output is rendered by the one
// rule, JSON included (its values unchanged). Only 'skillgate mcp' keeps
// its stdout raw: it is the MCP stdio stream, not text for a human. The
// returned function flushes and restores the writers.
func (m *Main) renderOutput(root *cobra.Command, args []string) func() {
	stdout, stderr := m.Stdout, m.Stderr
	errw := termtext.NewWriter(stderr)
	m.Stderr = errw
	var outw *termtext.Writer
	if c, _, err := root.Find(args); err != nil || c.Name() != "mcp" || c.Parent() != root {
		outw = termtext.NewWriter(stdout)
		m.Stdout = outw
	}
	return func() {
		if outw != nil {
			outw.Flush()
		}
		errw.Flush()
		m.Stdout, m.Stderr = stdout, stderr
	}
}

func (m *Main) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "skillgate",
		Short: "A skill registry and capability gateway for AI agents",
		Long: `skillgate discovers, validates, versions and indexes Agent Skills (folders
with a SKILL.md), and serves them to agents.

Data lives in ./.skillgate unless --data or SKILLGATE_DATA says otherwise;
the metadata store (registry, installs, policies, grants, sessions, audit
log) is the SQLite file DATA/skillgate.db unless --store, SKILLGATE_STORE or
the configuration's store: names another file or a postgres:// database. Only scan, install and token add create it;
other commands refuse a data directory that does not exist (exit 2).
Exit codes: 0 success, 1 failure (invalid skill, drift, not found), 2 usage
error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			return m.checkData(c, args)
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see '%s --help')", err, c.CommandPath())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&m.dataDir, "data", "", "data directory (default $SKILLGATE_DATA or ./.skillgate)")
	pf.StringVar(&m.configPath, "config", "", "configuration file (default DATA/config.yaml if present)")
	pf.StringVar(&m.storeFlag, "store", "", "metadata store: a postgres:// URL, or a SQLite file (default $SKILLGATE_STORE, the configuration's store:, or DATA/skillgate.db)")
	pf.BoolVarP(&m.verbose, "verbose", "v", false, "log what skillgate does to stderr")
	root.AddCommand(
		m.validateCommand(),
		m.initCommand(),
		m.scanSecurityCommand(),
		m.scanCommand(),
		m.lsCommand(),
		m.searchCommand(),
		m.showCommand(),
		m.promptCommand(),
		m.driftCommand(),
		m.enableCommand(true),
		m.enableCommand(false),
		m.versionCommand(),
		m.mcpCommand(),
		m.serveCommand(),
		m.tokenCommand(),
		m.discloseCommand(),
		m.auditCommand(),
		m.sessionCommand(),
		m.keyCommand(),
		m.signCommand(),
		m.verifySignatureCommand(),
		m.lockCommand(),
		m.verifyCommand(),
	)
	root.AddCommand(m.installCommands()...)
	root.AddCommand(m.addCommand(), m.configCommand(), m.manCommand())
	root.AddCommand(m.policyCommand(), m.grantCommand(), m.credentialCommand(), m.connectCommand(), m.connectionCommand())
	root.AddCommand(m.executorsCommand(), m.changesCommand())
	checkArgsOf(root)
	m.addCompletions(root)
	return root
}

// checkArgsOf gives every command of the tree under c the one argument
// check's message: the command's own check (cobra.ExactArgs(2), …) decides,
// and a wrong count is reported with what the command expects, from its
// usage line, instead of cobra's "accepts 2 arg(s), received 1":
// skillgate grant add: expected PRINCIPAL CAPABILITY, got 1 argument; see 'skillgate grant add --help'.
func checkArgsOf(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				if hasExitCode(err) { // the command's own message
					return err
				}
				if strings.Contains(err.Error(), "arg(s)") || !cmd.HasSubCommands() && strings.HasPrefix(err.Error(), "unknown command") {
					return usageErr("%s: expected %s, got %s; see '%s --help'", cmd.CommandPath(), expectedArgs(cmd.Use), plural.Of(len(args), "argument", "arguments"), cmd.CommandPath())
				}
				return usageErr("%v; see '%s --help'", err, cmd.CommandPath())
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		checkArgsOf(sub)
	}
}

// expectedArgs reads the positional arguments from a usage line
// ("add PRINCIPAL CAPABILITY [--level L]" → "PRINCIPAL CAPABILITY"):
// the words after the command's name that are not flags, flag values or
// optional ([…]); "no arguments" when there are none.
func expectedArgs(use string) string {
	words := strings.Fields(use)
	var out []string
	depth, skipValue := 0, false
	for _, w := range words[1:] {
		switch {
		case depth > 0 || strings.HasPrefix(w, "["):
			depth += strings.Count(w, "[") - strings.Count(w, "]")
		case w == "<" || w == "|":
			return joinArgs(out)
		case strings.HasPrefix(w, "-"):
			skipValue = !strings.Contains(w, "=")
		case skipValue:
			skipValue = false
		default:
			out = append(out, w)
		}
	}
	return joinArgs(out)
}

func joinArgs(words []string) string {
	if len(words) == 0 {
		return "no arguments"
	}
	return strings.Join(words, " ")
}

// data returns the data directory.
func (m *Main) data() string {
	if m.dataDir != "" {
		return m.dataDir
	}
	if d := m.Getenv("SKILLGATE_DATA"); d != "" {
		return d
	}
	return ".skillgate"
}

// checkData refuses to run a command that reads the data directory when
// the directory does not exist: a mistyped --data must not silently start
// an empty registry. Commands that create it (scan, install, token add),
// commands that do not use it, and commands given their input as
// arguments (prompt PATH, policy check FILE) run anyway.
func (m *Main) checkData(c *cobra.Command, args []string) error {
	if c.HasSubCommands() { // a group: it only prints its usage
		return nil
	}
	switch strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") {
	case "scan", "install", "token add": // they create it
		return m.app().CreateData()
	case "add": // it creates it, unless it only lists
		if list, _ := c.Flags().GetBool("list"); list {
			return nil
		}
		return m.app().CreateData()
	case "credential keygen", // creates it unless given --out
		"validate", "init", "config check", "man", "scan-security", "drift", "version", "key gen", "sign", "verify-signature", "help", "completion", "completion bash", "completion zsh",
		"completion fish", "completion powershell", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return nil
	case "prompt", "policy check":
		if len(args) > 0 {
			return nil
		}
	}
	from := "the default"
	switch {
	case m.dataDir != "":
		from = "--data"
	case m.Getenv("SKILLGATE_DATA") != "":
		from = "$SKILLGATE_DATA"
	}
	return m.app().RequireData(from)
}

func (m *Main) logger() *slog.Logger {
	if !m.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// app returns the application of the command being run, made on first
// use from the flags (which cobra has read by then).
func (m *Main) app() *app.App {
	if m.a == nil {
		m.a = app.New(app.Options{
			Data: m.data(), ConfigPath: m.configPath, Store: m.storeFlag, Getenv: m.Getenv,
			Logger: m.logger(), Stderr: m.Stderr, Version: version,
			IntrospectAs: m.introspectAs, NPMRegistry: m.npmRegistry,
		})
	}
	return m.a
}

// config loads and validates the configuration file (see [app.App.Config]).
func (m *Main) config() (*app.Config, error) { return m.app().Config() }

// failure gives err exit code 1 unless it says its own: for the errors of
// app that the command reports as failures whatever their message.
func failure(err error) error {
	if err == nil || hasExitCode(err) {
		return err
	}
	return &exitError{code: exitFail, err: err}
}

// hasExitCode reports whether err says its own exit code.
func hasExitCode(err error) bool {
	var ee *exitError
	var ue *app.UsageError
	return errors.As(err, &ee) || errors.As(err, &ue)
}

// list prints v, a listing of n items, as JSON or, when there are any,
// with text; none is said on stderr with empty.
func (m *Main) list(asJSON bool, v any, n int, empty string, text func(io.Writer) error) error {
	if asJSON {
		return jsonout.Write(m.Stdout, v)
	}
	if n == 0 {
		fmt.Fprintln(m.Stderr, empty)
		return nil
	}
	return text(m.Stdout)
}
