// Package launch turns the package-manager launches users write in mcp.json
// (npx PKG, npm exec, uvx PKG, uv tool run, pipx run) into fetched, pinned
// packages: at install, each launched package and its dependencies are
// fetched with the ecosystem's own client (npm, pip) into the install's
// managed storage, inside a sandbox that may reach the registry and nothing
// else of the host; the exact versions, integrity hashes and registry are
// recorded ([Package]) and become part of the version's digest; and the
// server runs from that tree, offline, instead of whatever the launcher
// would download at each start. A tree changed after approval is drift
// ([Verifier]).
package launch

import "errors"

// Ecosystem is the package registry family a launch fetches from.
type Ecosystem string

// The ecosystems.
const (
	// NPM is the npm registry (npx, npm exec); its client is npm.
	NPM Ecosystem = "npm"
	// PyPI is a Python package index (uvx, uv tool run, pipx run); its
	// client is pip.
	PyPI Ecosystem = "pypi"
)

// Launchers, as [Launch.Launcher] names them.
const (
	LauncherNPX     = "npx"
	LauncherNPMExec = "npm exec"
	LauncherUVX     = "uvx"
	LauncherUVTool  = "uv tool run"
	LauncherPipx    = "pipx run"
)

// Sentinel errors callers branch on.
var (
	// ErrUnsupported means a declaration uses a launcher in a form that
	// cannot be pinned (a git, URL or path package, several packages, an
	// option skillgate does not honour); the error says which and what to
	// write instead.
	ErrUnsupported = errors.New("launch cannot be pinned")
	// ErrFetch means a package could not be fetched: the registry cannot
	// be reached, the version does not exist, the integrity does not
	// match, or the client failed; the error names the registry, the
	// package and the fix.
	ErrFetch = errors.New("package fetch failed")
	// ErrInstallScript means a fetched package has install scripts
	// (preinstall, install, postinstall), which are not run unless the
	// operator allows that package by name.
	ErrInstallScript = errors.New("package has install scripts")
	// ErrDrift means a fetched tree no longer hashes to what was
	// approved, or is missing.
	ErrDrift = errors.New("fetched package changed")
)

// Launch is a package-manager launch recognised in a server declaration.
type Launch struct {
	// Launcher is how it was declared: LauncherNPX, LauncherNPMExec,
	// LauncherUVX, LauncherUVTool or LauncherPipx.
	Launcher string
	// Ecosystem is where Package comes from.
	Ecosystem Ecosystem
	// Package is the package's name as its registry spells it
	// ("@modelcontextprotocol/server-memory", "mcp-server-time").
	Package string
	// Requested is the version or range as declared ("2026.8.31",
	// "^1.2", ">=1.0,<2"); empty means the newest.
	Requested string
	// Bin is the program of the package the launcher runs when the
	// declaration names one (npx --package=P BIN, uvx --from P BIN,
	// pipx run --spec P BIN); empty means the package's own (the only
	// one, or the one named after the package).
	Bin string
	// With are further packages installed beside Package ("zod@3.25.76"),
	// from npx's further --package options: a dependency the server's
	// package fails to declare, or one held to a version that works.
	With []string
	// Args are the server's own arguments, after the package (or Bin).
	Args []string
}

// Spec is the package as its client is asked for it: "name@requested"
// for npm, "name==requested" or "namerequested" (a range) for PyPI, the
// bare name when no version was requested.
func (l Launch) Spec() string {
	if l.Requested == "" {
		return l.Package
	}
	if l.Ecosystem == NPM {
		return l.Package + "@" + l.Requested
	}
	if startsWithOperator(l.Requested) {
		return l.Package + l.Requested
	}
	return l.Package + "==" + l.Requested
}

// startsWithOperator reports whether a PEP 440 requirement starts with a
// comparison operator rather than a bare version.
func startsWithOperator(s string) bool {
	return s != "" && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '!' || s[0] == '~')
}

// Package is one fetched, pinned package: what the review shows, the lock
// file and the audit record keep, and what the version's digest binds.
type Package struct {
	// Server is the id of the server (in mcp.json) that launches it.
	Server string `json:"server"`
	// Launcher is how mcp.json declared it (see [Launch.Launcher]).
	Launcher string `json:"launcher"`
	// Ecosystem is npm or pypi.
	Ecosystem Ecosystem `json:"ecosystem"`
	// Name is the package's name.
	Name string `json:"name"`
	// Requested is the version or range declared; empty for "the newest".
	Requested string `json:"requested,omitempty"`
	// Version is the exact version fetched.
	Version string `json:"version"`
	// Integrity is the registry's hash of the package's archive
	// ("sha512-…" for npm, "sha256:…" for a wheel).
	Integrity string `json:"integrity"`
	// Registry is the registry or index it was fetched from.
	Registry string `json:"registry"`
	// Bin is the program the server runs, relative to the fetched tree
	// (npm: "node_modules/PKG/dist/index.js"), or, for PyPI, the console
	// script's entry point ("module:function").
	Bin string `json:"bin"`
	// With are the further packages the launch installs beside Name, as
	// declared (npx --package=A --package=B PROGRAM); their exact
	// versions are among Dependencies.
	With []string `json:"with,omitempty"`
	// Interpreter is the absolute path of the interpreter that runs Bin
	// (node, or the Python the package was fetched for).
	Interpreter string `json:"interpreter"`
	// Dependencies are every other package fetched with it, sorted by
	// name.
	Dependencies []Dependency `json:"dependencies"`
	// Scripts are the packages of the tree that declare install scripts,
	// with the operator's allowance where one was given.
	Scripts []Script `json:"scripts,omitempty"`
	// Tree is the digest of the fetched tree, as [TreeDigest] computes it.
	Tree string `json:"tree"`
}

// Dependency is one package fetched as a dependency of another.
type Dependency struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Integrity string `json:"integrity,omitempty"`
}

// Script is a package whose install scripts (npm's preinstall, install,
// postinstall) the fetch found. They run only when the operator allowed
// the package by name, with a reason.
type Script struct {
	// Package and Version name the package.
	Package string `json:"package"`
	Version string `json:"version"`
	// Allowed says the operator allowed them, with Why; they then ran,
	// in the fetch sandbox.
	Allowed bool   `json:"allowed"`
	Why     string `json:"why,omitempty"`
}
