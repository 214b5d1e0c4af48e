package mcpclient

import (
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"time"
)

// Limits bound everything an upstream server can make skillgate wait for or
// hold in memory. A zero (or negative) field selects its default, listed on
// the field. The defaults leave room for real servers (npx may take seconds
// to start a package; the largest public servers list about a hundred tools)
// while keeping the worst case of a hostile one to seconds and megabytes.
type Limits struct {
	// InitializeTimeout bounds starting a stdio process and the initialize
	// handshake. Default 30s.
	InitializeTimeout time.Duration
	// ListTimeout bounds listing all tools, every page included. Default 30s.
	ListTimeout time.Duration
	// CallTimeout bounds one tools/call through a [Conn] (the caller's
	// context may end it sooner). Default 60s.
	CallTimeout time.Duration
	// TerminateTimeout is how long closing waits after closing a stdio
	// server's stdin before SIGTERM, and after SIGTERM before SIGKILL. It
	// also bounds how long an error waits to learn a process's exit status.
	// Default 2s.
	TerminateTimeout time.Duration
	// MaxTools is the most tools a server may offer. Default 1000.
	MaxTools int
	// MaxPages is the most tools/list pages followed. Default 100.
	MaxPages int
	// MaxFrameBytes bounds one JSON-RPC message from the server (one stdio
	// line, one HTTP JSON body, one SSE line). Default 4 MiB.
	MaxFrameBytes int
	// MaxListBytes bounds the sum of all tools/list result pages. Default 8 MiB.
	MaxListBytes int
	// MaxDescriptionBytes bounds one tool's description (and title). Longer
	// text is a per-tool problem: a description that large is a place to hide
	// instructions for the model. Default 32 KiB.
	MaxDescriptionBytes int
	// MaxSchemaBytes bounds one tool's input or output schema. Default 256 KiB.
	MaxSchemaBytes int
	// MaxSchemaDepth bounds how deeply one schema's JSON nests (objects and
	// arrays). Compiling a JSON Schema costs time superlinear in its depth
	// (measured with the jsonschema library: 1,000 levels take seconds,
	// 5,000 minutes), so a deeper schema is a per-tool problem and is not
	// compiled. Real tool schemas nest a dozen levels. Default 64.
	MaxSchemaDepth int
	// MaxSkills is the most skills a server may publish through the MCP
	// Skills extension (each within the extension's per-skill limits,
	// MaxSkillFiles and MaxSkillBytes). Default 100.
	MaxSkills int
	// MaxStderrBytes is how much of the tail of a stdio server's stderr is kept
	// for error messages. Default 2 KiB.
	MaxStderrBytes int
}

// Default limits; see [Limits] for what each bounds.
const (
	DefaultInitializeTimeout   = 30 * time.Second
	DefaultListTimeout         = 30 * time.Second
	DefaultCallTimeout         = 60 * time.Second
	DefaultTerminateTimeout    = 2 * time.Second
	DefaultMaxTools            = 1000
	DefaultMaxPages            = 100
	DefaultMaxFrameBytes       = 4 << 20
	DefaultMaxListBytes        = 8 << 20
	DefaultMaxDescriptionBytes = 32 << 10
	DefaultMaxSchemaBytes      = 256 << 10
	DefaultMaxSchemaDepth      = 64
	DefaultMaxStderrBytes      = 2 << 10
	DefaultMaxSkills           = 100
)

// withDefaults returns l with every non-positive field set to its default.
func (l Limits) withDefaults() Limits {
	setDur := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	setInt := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
	}
	setDur(&l.InitializeTimeout, DefaultInitializeTimeout)
	setDur(&l.ListTimeout, DefaultListTimeout)
	setDur(&l.CallTimeout, DefaultCallTimeout)
	setDur(&l.TerminateTimeout, DefaultTerminateTimeout)
	setInt(&l.MaxTools, DefaultMaxTools)
	setInt(&l.MaxPages, DefaultMaxPages)
	setInt(&l.MaxFrameBytes, DefaultMaxFrameBytes)
	setInt(&l.MaxListBytes, DefaultMaxListBytes)
	setInt(&l.MaxDescriptionBytes, DefaultMaxDescriptionBytes)
	setInt(&l.MaxSchemaBytes, DefaultMaxSchemaBytes)
	setInt(&l.MaxSchemaDepth, DefaultMaxSchemaDepth)
	setInt(&l.MaxStderrBytes, DefaultMaxStderrBytes)
	setInt(&l.MaxSkills, DefaultMaxSkills)
	return l
}

// DefaultInheritEnv returns the variables a stdio server inherits from
// skillgate's own environment when [Options.InheritEnv] is nil: enough for an
// interpreter (node, python) to start, and nothing that usually holds a
// secret. Everything else a server needs must be declared in its env.
func DefaultInheritEnv() []string {
	return []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"}
}

// Options configures [Introspect] and [Dial]. A nil *Options, or a zero field,
// selects the default.
type Options struct {
	// Logger receives debug and warning events. Nil discards them.
	Logger *slog.Logger
	// Credentials expands ${NAME} references in env and header values. Nil
	// means no credential is set, so any reference fails with
	// [ErrMissingCredential].
	Credentials CredentialLookup
	// Limits bounds time and size; see [Limits].
	Limits Limits
	// Dir is the working directory of stdio servers (typically the skill's
	// directory). Empty means skillgate's working directory.
	Dir string
	// InheritEnv names the variables copied from skillgate's environment into
	// a stdio server's. Nil means [DefaultInheritEnv]; an empty non-nil slice
	// copies nothing.
	InheritEnv []string
	// Getenv reads skillgate's environment for InheritEnv. Nil means
	// os.LookupEnv; tests inject a map.
	Getenv func(string) (string, bool)
	// Confine, when set, confines each stdio server's process before it
	// starts (package sandbox). Nil runs servers as skillgate's own user,
	// unconfined: only for code the operator trusts (a first_party skill
	// set to run unconfined, --unconfined introspection).
	Confine Confiner
	// HTTPClient is the base client for streamable HTTP servers. Nil means a
	// client using http.DefaultTransport. Its Transport is wrapped, never
	// modified.
	HTTPClient *http.Client
	// ClientName and ClientVersion are sent as clientInfo in initialize.
	// Defaults "skillgate" and "dev".
	ClientName, ClientVersion string
}

// Confiner confines a stdio server's process: Confine rewrites the command,
// not yet started, to run it confined (exec.Cmd's Path, Args, Env, Dir,
// ExtraFiles). The stdio transport closes the command's ExtraFiles once it
// has started. *sandbox.Bubblewrap implements it.
type Confiner interface {
	Confine(cmd *exec.Cmd) error
}

// resolved is Options with every default applied.
type resolved struct {
	Options
	limits Limits
	logger *slog.Logger
}

func (o *Options) resolve() resolved {
	var r resolved
	if o != nil {
		r.Options = *o
	}
	r.limits = r.Limits.withDefaults()
	r.logger = r.Logger
	if r.logger == nil {
		r.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if r.InheritEnv == nil {
		r.InheritEnv = DefaultInheritEnv()
	}
	if r.ClientName == "" {
		r.ClientName = "skillgate"
	}
	if r.ClientVersion == "" {
		r.ClientVersion = "dev"
	}
	return r
}
