package launch

import (
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Bounds on what a declaration may name. The caller bounds args already;
// these hold for any input.
const (
	// maxWith bounds the further --package options of one npx launch.
	maxWith = 8
	// maxNPMName is npm's own limit on a package name.
	maxNPMName = 214
	// maxRequested bounds a version, range or dist-tag.
	maxRequested = 256
	// maxPyPISpec bounds a Python requirement (name and versions).
	maxPyPISpec = 512
	// maxBin bounds a program name.
	maxBin = 214
	// maxQuoted bounds how much of a hostile token an error message shows.
	maxQuoted = 128
)

// Parse recognises a server declaration's command and args as a
// package-manager launch, so that the package it would download at each
// start can be fetched once, pinned and reviewed instead.
//
// The command is recognised by its base name (it may be a path, like
// /usr/bin/npx): npx, npm (exec or x), uvx, uv (tool run) and pipx (run).
// ok is false, and err nil, when the command is not a launcher at all
// (node, python3, ./server, npm start, uv run, pipx install: they run
// what is already there). err wraps [ErrUnsupported] when the command is
// a launcher used in a form that cannot be pinned (a git, URL or path
// package, several packages, an option skillgate does not honour); ok is
// then true, and the message names the part of the declaration at fault
// and what to write instead.
//
// The server's own arguments, after the package (or its program), are
// kept verbatim in [Launch.Args], even those that look like options.
func Parse(command string, args []string) (l Launch, ok bool, err error) {
	switch command[strings.LastIndexByte(command, '/')+1:] {
	case "npx":
		l, err = parseNPM(LauncherNPX, args, 0)
		return l, true, err
	case "npm":
		if len(args) > 0 && (args[0] == "exec" || args[0] == "x") {
			l, err = parseNPM(LauncherNPMExec, args[1:], 1)
			return l, true, err
		}
		return optionsFirst("npm", args, "exec first (npm exec -y NAME@VERSION)", func(i int) bool {
			return args[i] == "exec" || args[i] == "x"
		})
	case "uvx":
		l, err = parseUV(LauncherUVX, args, 0)
		return l, true, err
	case "uv":
		if len(args) > 1 && args[0] == "tool" && args[1] == "run" {
			l, err = parseUV(LauncherUVTool, args[2:], 2)
			return l, true, err
		}
		return optionsFirst("uv", args, "tool run first (uv tool run NAME==VERSION)", func(i int) bool {
			return args[i] == "tool" && i+1 < len(args) && args[i+1] == "run"
		})
	case "pipx":
		if len(args) > 0 && args[0] == "run" {
			l, err = parsePipx(args[1:], 1)
			return l, true, err
		}
		return optionsFirst("pipx", args, "run first (pipx run NAME==VERSION)", func(i int) bool {
			return args[i] == "run"
		})
	}
	return Launch{}, false, nil
}

// optionsFirst decides a launcher command whose args do not start with
// its launching subcommand: another subcommand (npm start, uv run, pipx
// install) is not a launch, but options written before the launching
// subcommand (npm -y exec PKG) are, in a form not supported.
func optionsFirst(cmd string, args []string, fix string, launching func(i int) bool) (Launch, bool, error) {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		return Launch{}, false, nil
	}
	for i := range args {
		if launching(i) {
			return Launch{}, true, failAt(cmd, 0, args[0], "options before %s's subcommand are not supported; write %s", cmd, fix)
		}
	}
	return Launch{}, false, nil
}

// unsupportedError is an [ErrUnsupported] with its own message.
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }
func (e *unsupportedError) Unwrap() error { return ErrUnsupported }

// fail is an [ErrUnsupported] whose message is "launch: " and the format.
func fail(format string, a ...any) error {
	return &unsupportedError{"launch: " + fmt.Sprintf(format, a...)}
}

// failAt is an [ErrUnsupported] about the declaration's args[index], tok,
// of the launcher.
func failAt(launcher string, index int, tok, format string, a ...any) error {
	return fail("%s args[%d] %s: %s", launcher, index, quote(tok), fmt.Sprintf(format, a...))
}

// quote renders hostile text for a message, quoted and bounded.
func quote(s string) string { return strictjson.Quote(s, maxQuoted) }

// optionName is an option token's name, without any "=value".
func optionName(tok string) string {
	if i := strings.IndexByte(tok, '='); i >= 0 {
		return tok[:i]
	}
	return tok
}

// unsupportedOption is the error for an option of the launcher that
// skillgate does not honour, with the hint hints gives for its name.
func unsupportedOption(launcher string, index int, tok string, hints map[string]string) error {
	name := optionName(tok)
	if hint, ok := hints[name]; ok {
		return failAt(launcher, index, tok, "the option %s is not supported; %s", name, hint)
	}
	return failAt(launcher, index, tok, "this %s option is not supported; skillgate fetches the package with its own settings: remove the option", launcher)
}

const (
	removeHint     = "remove the option"
	fetchesHint    = "skillgate fetches the package with its own settings: remove the option"
	pypiIndexHint  = "set the index in skillgate's configuration (packages.pypi.index) and remove the option"
	pythonHint     = "the Python that runs the server is not chosen in args: remove the option"
	noInstallHint  = "it would run only what the host already has, while skillgate fetches and pins the package: remove the option"
	callHint       = "declare the program and its arguments directly (command and args) instead of a command line"
	npmRegistryFix = "set the registry in skillgate's configuration (packages.npm.registry) and remove the option"
)

// npmHints say what to do about npm options that cannot be honoured.
var npmHints = map[string]string{
	"--registry":       npmRegistryFix,
	"-c":               callHint,
	"--call":           callHint,
	"--no-install":     noInstallHint,
	"--no":             noInstallHint,
	"--ignore-scripts": "install scripts never run unless the operator allows the package by name: " + removeHint,
	"--cache":          fetchesHint,
	"--prefix":         fetchesHint,
	"--userconfig":     fetchesHint,
	"--node-options":   "node's options are not chosen in args: " + removeHint,
	"--workspace":      "a launch fetches a package from the registry, not a workspace: " + removeHint,
	"-w":               "a launch fetches a package from the registry, not a workspace: " + removeHint,
	"--workspaces":     "a launch fetches a package from the registry, not a workspace: " + removeHint,
}

// uvHints say what to do about uv options that cannot be honoured.
var uvHints = map[string]string{
	"--index-url":         pypiIndexHint,
	"-i":                  pypiIndexHint,
	"--extra-index-url":   pypiIndexHint,
	"--index":             pypiIndexHint,
	"--default-index":     pypiIndexHint,
	"--find-links":        pypiIndexHint,
	"-f":                  pypiIndexHint,
	"--no-index":          pypiIndexHint,
	"--with":              "declare the extra package as a dependency of the server's package, and remove the option",
	"-w":                  "declare the extra package as a dependency of the server's package, and remove the option",
	"--with-requirements": "declare the extra packages as dependencies of the server's package, and remove the option",
	"--with-editable":     "declare the extra package as a dependency of the server's package, and remove the option",
	"--python":            pythonHint,
	"-p":                  pythonHint,
	"--offline":           noInstallHint,
	"--refresh":           fetchesHint,
}

// pipxHints say what to do about pipx options that cannot be honoured.
var pipxHints = map[string]string{
	"--index-url": pypiIndexHint,
	"-i":          pypiIndexHint,
	"--pip-args":  "pip's options are set in skillgate's configuration (packages.pypi), not in args: " + removeHint,
	"--python":    pythonHint,
	"--editable":  "a launch fetches a package from the index, not a directory: " + removeHint,
	"-e":          "a launch fetches a package from the index, not a directory: " + removeHint,
	"--path":      "a launch fetches a package from the index, not a script on the host: " + removeHint,
	"--":          removeHint + " and write the package right after pipx run's options",
}

// parseNPM parses npx's args, or npm exec's after "exec"; off is the
// index in the declaration's args of args[0].
func parseNPM(launcher string, args []string, off int) (Launch, error) {
	var (
		pkg, pkgTok string // from --package, and its token
		pkgAt       int
		dashdash    bool
		with        []string // the packages of further --package options
	)
	for i := 0; i < len(args); i++ {
		tok, at := args[i], off+i
		if !dashdash && strings.HasPrefix(tok, "-") && tok != "-" {
			var value string
			switch {
			case tok == "--":
				dashdash = true
				continue
			case tok == "-y" || tok == "--yes" || tok == "-q" || tok == "--quiet" || tok == "--silent":
				continue
			case tok == "-p" || tok == "--package":
				if i+1 >= len(args) {
					return Launch{}, failAt(launcher, off+i, tok, "no package follows; write --package=NAME@VERSION PROGRAM")
				}
				i++
				value = args[i]
			case strings.HasPrefix(tok, "--package="):
				value = tok[len("--package="):]
			default:
				return Launch{}, unsupportedOption(launcher, off+i, tok, npmHints)
			}
			if pkgTok != "" {
				// A further --package is installed beside the first, as npx
				// does (a dependency the server's package fails to
				// declare, or one pinned to a version that works).
				name, requested, problem := parseNPMSpec(value)
				if problem != "" {
					return Launch{}, failAt(launcher, at, tok, "%s", problem)
				}
				if len(with) >= maxWith {
					return Launch{}, failAt(launcher, at, tok, "more than %d --package options; a launch fetches a server's package and a few packages beside it", maxWith+1)
				}
				with = append(with, Launch{Ecosystem: NPM, Package: name, Requested: requested}.Spec())
				continue
			}
			pkg, pkgTok, pkgAt = value, tok, off+i
			if tok == "-p" || tok == "--package" {
				pkgTok = value
			}
			continue
		}

		// The first positional: the package, or with --package the program.
		l := Launch{Launcher: launcher, Ecosystem: NPM}
		spec, specTok, specAt := tok, tok, off+i
		if pkgTok != "" {
			if problem := checkBin(tok); problem != "" {
				return Launch{}, failAt(launcher, off+i, tok, "%s", problem)
			}
			l.Bin = tok
			spec, specTok, specAt = pkg, pkgTok, pkgAt
		}
		name, requested, problem := parseNPMSpec(spec)
		if problem != "" {
			return Launch{}, failAt(launcher, specAt, specTok, "%s", problem)
		}
		l.Package, l.Requested, l.With = name, requested, with
		rest := args[i+1:]
		if launcher == LauncherNPMExec && !dashdash {
			// npm exec reads options after the package as its own, up to
			// a "--", after which everything is the server's.
			for j, a := range rest {
				if a == "--" {
					rest = append(rest[:j:j], rest[j+1:]...)
					break
				}
				if strings.HasPrefix(a, "-") && a != "-" {
					return Launch{}, failAt(launcher, off+i+1+j, a, "npm exec reads options after the package as its own; write -- before the package (npm exec -y -- NAME@VERSION ARGS)")
				}
			}
		}
		l.Args = append([]string(nil), rest...)
		return l, nil
	}
	if pkgTok != "" {
		return Launch{}, fail("%s --package without a program; write the program to run after it (%s --package=NAME@VERSION PROGRAM)", launcher, launcher)
	}
	return Launch{}, fail("%s without a package; write the package after its options (%s -y NAME@VERSION)", launcher, launcher)
}

// parseNPMSpec splits an npm package spec into name and requested version
// or range; problem says why it cannot be pinned, if it cannot.
func parseNPMSpec(tok string) (name, requested, problem string) {
	if tok == "" {
		return "", "", "the package is empty; write it as NAME@VERSION"
	}
	if hasControl(tok) {
		return "", "", "the package contains a control character; write it as NAME@VERSION"
	}
	if p := npmSource(tok); p != "" {
		return "", "", p
	}
	name = tok
	at := -1
	if tok[0] == '@' {
		if j := strings.IndexByte(tok[1:], '@'); j >= 0 {
			at = j + 1
		}
	} else {
		at = strings.IndexByte(tok, '@')
	}
	if at >= 0 {
		name, requested = tok[:at], tok[at+1:]
	}
	if name[0] != '@' && strings.ContainsAny(name, "/\\") {
		return "", "", "the package is GitHub shorthand (USER/REPO) for a git repository, which cannot be pinned; publish the server to the npm registry and write NAME@VERSION (a scoped package is @SCOPE/NAME)"
	}
	if strings.Contains(name, ":") {
		return "", "", "the package is a URL, which cannot be pinned; write a registry package as NAME@VERSION"
	}
	if isTarball(name) {
		return "", "", "the package is a tarball file on the host, which cannot be pinned; publish it to the npm registry and write NAME@VERSION"
	}
	if problem := checkNPMName(name); problem != "" {
		return "", "", problem
	}
	if at >= 0 {
		if problem := checkNPMRequested(requested); problem != "" {
			return "", "", problem
		}
	}
	return name, requested, ""
}

// npmSource says why tok, an npm spec, is a git repository, URL, path or
// alias rather than a registry package; empty when it is none of them.
func npmSource(tok string) string {
	lower := strings.ToLower(tok)
	switch {
	case hasAnyPrefix(lower, "github:", "gitlab:", "bitbucket:", "gist:", "git+", "git:", "git@"):
		return "the package is a git repository, which cannot be pinned; publish the server to the npm registry and write NAME@VERSION"
	case hasAnyPrefix(lower, "http:", "https:"):
		return "the package is a URL, which cannot be pinned; write a registry package as NAME@VERSION"
	case hasAnyPrefix(lower, "file:", ".", "/", "~", "\\") || isDrivePath(tok):
		return "the package is a path on the host, which cannot be pinned; declare the server's program itself as the command, or publish it to the npm registry and write NAME@VERSION"
	case strings.HasPrefix(lower, "npm:"):
		return "the package is an npm alias (npm:), which is not supported; write the package itself as NAME@VERSION"
	}
	return ""
}

// checkNPMRequested says what is wrong with the version, range or
// dist-tag after a package's @; empty when nothing is.
func checkNPMRequested(r string) string {
	lower := strings.ToLower(r)
	switch {
	case r == "":
		return "the package has no version after @; write NAME@VERSION, or NAME alone for the newest"
	case strings.HasPrefix(lower, "npm:"):
		return "the package is an npm alias (npm:), which is not supported; write the package itself as NAME@VERSION"
	case strings.ContainsAny(r, ":/\\#"):
		return "the package names a git repository, URL or path after @, which cannot be pinned; write a registry version (NAME@1.2.3)"
	case len(r) > maxRequested:
		return fmt.Sprintf("the version after @ is longer than %d bytes; write NAME@1.2.3", maxRequested)
	case r[0] == ' ' || r[len(r)-1] == ' ':
		return "the version after @ starts or ends with a space; write NAME@1.2.3"
	}
	for i := 0; i < len(r); i++ {
		if !isAlnum(r[i]) && !strings.ContainsRune(" .^~<>=|*+_-", rune(r[i])) {
			return "the version after @ is not a version, range or dist-tag; write NAME@1.2.3"
		}
	}
	return ""
}

// checkNPMName says what is wrong with an npm package name; empty when
// nothing is. npm's rules: at most 214 characters, lowercase, URL-safe
// (a-z 0-9 - . _ ~), not starting with . or _, optionally @SCOPE/ first.
// A name starting with - is refused too: a client would read it as an
// option.
func checkNPMName(name string) string {
	if len(name) > maxNPMName {
		return fmt.Sprintf("the package name is longer than %d characters, npm's limit", maxNPMName)
	}
	if strings.ToLower(name) != name {
		return "npm package names are lowercase; write " + quote(strings.ToLower(name))
	}
	parts := []string{name}
	if name[0] == '@' {
		scope, pkg, ok := strings.Cut(name[1:], "/")
		if !ok || scope == "" || pkg == "" || strings.Contains(pkg, "/") {
			return "a scoped package is @SCOPE/NAME; write it so, as @SCOPE/NAME@VERSION"
		}
		parts = []string{scope, pkg}
	}
	for _, p := range parts {
		if p[0] == '.' || p[0] == '_' || p[0] == '-' {
			return "npm package names do not start with . _ or -; write the name as the registry spells it"
		}
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !isLowerAlnum(c) && c != '-' && c != '.' && c != '_' && c != '~' {
				return "the package name has characters npm package names do not (they use a-z 0-9 - . _ ~, after @SCOPE/ for a scoped one); write NAME@VERSION"
			}
		}
	}
	return ""
}

// isTarball reports whether an npm spec names a tarball file, as npm
// reads it.
func isTarball(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasSuffix(lower, ".tgz") || strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tar")
}

// isDrivePath reports whether s starts like a Windows path (C:\ or C:/).
func isDrivePath(s string) bool {
	return len(s) >= 3 && isAlpha(s[0]) && s[1] == ':' && (s[2] == '\\' || s[2] == '/')
}

// parseUV parses uvx's args, or uv tool run's after "tool run"; off is
// the index in the declaration's args of args[0].
func parseUV(launcher string, args []string, off int) (Launch, error) {
	var (
		from, fromTok string
		fromAt        int
		dashdash      bool
	)
	for i := 0; i < len(args); i++ {
		tok, at := args[i], off+i
		if !dashdash && strings.HasPrefix(tok, "-") && tok != "-" {
			var value string
			switch {
			case tok == "--":
				dashdash = true
				continue
			case tok == "-q" || tok == "--quiet":
				continue
			case tok == "--from":
				if i+1 >= len(args) {
					return Launch{}, failAt(launcher, off+i, tok, "no package follows; write --from NAME==VERSION PROGRAM")
				}
				i++
				value = args[i]
			case strings.HasPrefix(tok, "--from="):
				value = tok[len("--from="):]
			default:
				return Launch{}, unsupportedOption(launcher, off+i, tok, uvHints)
			}
			if fromTok != "" {
				return Launch{}, failAt(launcher, at, tok, "a second --from; a launch fetches one package: declare the others as dependencies of the server's package")
			}
			from, fromTok, fromAt = value, tok, off+i
			if tok == "--from" {
				fromTok = value
			}
			continue
		}
		return pypiLaunch(launcher, args, i, off, tok, from, fromTok, fromAt, true)
	}
	if fromTok != "" {
		return Launch{}, fail("%s --from without a program; write the program to run after the package (%s --from NAME==VERSION PROGRAM)", launcher, launcher)
	}
	return Launch{}, fail("%s without a package; write the package after its options (%s NAME==VERSION)", launcher, launcher)
}

// parsePipx parses pipx run's args after "run"; off is the index in the
// declaration's args of args[0].
func parsePipx(args []string, off int) (Launch, error) {
	const launcher = LauncherPipx
	var (
		spec, specTok string
		specAt        int
	)
	for i := 0; i < len(args); i++ {
		tok, at := args[i], off+i
		if strings.HasPrefix(tok, "-") && tok != "-" {
			var value string
			switch {
			case tok == "-q" || tok == "--quiet" || tok == "--no-cache":
				continue
			case tok == "--spec":
				if i+1 >= len(args) {
					return Launch{}, failAt(launcher, off+i, tok, "no package follows; write --spec NAME==VERSION PROGRAM")
				}
				i++
				value = args[i]
			case strings.HasPrefix(tok, "--spec="):
				value = tok[len("--spec="):]
			default:
				return Launch{}, unsupportedOption(launcher, off+i, tok, pipxHints)
			}
			if specTok != "" {
				return Launch{}, failAt(launcher, at, tok, "a second --spec; a launch fetches one package: declare the others as dependencies of the server's package")
			}
			spec, specTok, specAt = value, tok, off+i
			if tok == "--spec" {
				specTok = value
			}
			continue
		}
		return pypiLaunch(launcher, args, i, off, tok, spec, specTok, specAt, false)
	}
	if specTok != "" {
		return Launch{}, fail("%s --spec without a program; write the program to run after the package (%s --spec NAME==VERSION PROGRAM)", launcher, launcher)
	}
	return Launch{}, fail("%s without a package; write the package after its options (%s NAME==VERSION)", launcher, launcher)
}

// pypiLaunch is the PyPI launch whose first positional is args[i], tok:
// the package, or with a package from an option (from, its token fromTok
// at fromAt) the program. uvAt says the launcher is uv's, which reads
// NAME@VERSION as a version.
func pypiLaunch(launcher string, args []string, i, off int, tok, from, fromTok string, fromAt int, uvAt bool) (Launch, error) {
	l := Launch{Launcher: launcher, Ecosystem: PyPI}
	spec, specTok, specAt := tok, tok, off+i
	if fromTok != "" {
		if problem := checkBin(tok); problem != "" {
			return Launch{}, failAt(launcher, off+i, tok, "%s", problem)
		}
		l.Bin = tok
		spec, specTok, specAt = from, fromTok, fromAt
	}
	name, requested, problem := parsePyPISpec(spec, uvAt)
	if problem != "" {
		return Launch{}, failAt(launcher, specAt, specTok, "%s", problem)
	}
	l.Package, l.Requested = name, requested
	l.Args = append([]string(nil), args[i+1:]...)
	return l, nil
}

// pep440Operators are PEP 440's comparison operators, longest first.
var pep440Operators = []string{"===", "==", "!=", "<=", ">=", "~=", "<", ">"}

// parsePyPISpec splits a Python requirement into name and requested
// version: "X" for ==X (or uv's NAME@X), the specifiers without spaces
// for a range (">=1.0,<2"), empty for the newest. problem says why it
// cannot be pinned, if it cannot. uvAt accepts uv's NAME@VERSION.
func parsePyPISpec(tok string, uvAt bool) (name, requested, problem string) {
	switch {
	case tok == "":
		return "", "", "the package is empty; write it as NAME==VERSION"
	case hasControl(tok):
		return "", "", "the package contains a control character; write it as NAME==VERSION"
	case len(tok) > maxPyPISpec:
		return "", "", fmt.Sprintf("the package is longer than %d bytes; write it as NAME==VERSION", maxPyPISpec)
	case strings.Contains(tok, "://") || strings.ContainsAny(tok, "/\\") ||
		hasAnyPrefix(strings.ToLower(tok), "git+", "http:", "https:", "file:", ".", "~") || isDrivePath(tok):
		return "", "", "the package is a URL or path, which cannot be pinned; publish it to the index and write NAME==VERSION"
	case strings.Contains(tok, ";"):
		return "", "", "environment markers (;) are not supported; write the package as NAME==VERSION"
	}
	n := 0
	for n < len(tok) && (isAlnum(tok[n]) || tok[n] == '.' || tok[n] == '_' || tok[n] == '-') {
		n++
	}
	name, rest := tok[:n], tok[n:]
	if name == "" || !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return "", "", "the package does not start with a Python package name (letters, digits and . _ - inside); write NAME==VERSION"
	}
	spaced := strings.HasPrefix(rest, " ")
	rest = strings.TrimLeft(rest, " ")
	switch {
	case rest == "":
		return name, "", ""
	case rest[0] == '[':
		return "", "", "extras are not supported; name the package without them (NAME==VERSION) and declare what the extra brings as dependencies of the server's package"
	case rest[0] == '@' && (spaced || !uvAt):
		return "", "", "NAME @ ... is a direct reference (a URL), which cannot be pinned; write NAME==VERSION"
	case rest[0] == '@':
		v := rest[1:]
		switch {
		case v == "":
			return "", "", "the package has no version after @; write NAME@VERSION, or NAME alone for the newest"
		case v == "latest":
			return name, "", ""
		case !validPEP440Version(v):
			return "", "", "the version after @ is not a version; write NAME@1.2.3, or NAME==VERSION, or a range such as NAME>=1,<2"
		}
		return name, v, ""
	case strings.ContainsRune("<>=!~", rune(rest[0])):
		return parsePEP440Specifiers(name, rest)
	}
	return "", "", "the package name has characters Python package names do not (letters, digits and . _ -); write NAME==VERSION"
}

// parsePEP440Specifiers parses the version specifiers after a Python
// package's name ("==1.2", ">=1, <2").
func parsePEP440Specifiers(name, rest string) (string, string, string) {
	clauses := strings.Split(rest, ",")
	out := make([]string, 0, len(clauses))
	for _, c := range clauses {
		c = strings.TrimSpace(c)
		op := ""
		for _, o := range pep440Operators {
			if strings.HasPrefix(c, o) {
				op = o
				break
			}
		}
		v := strings.TrimSpace(c[len(op):])
		if op == "" || !validPEP440Version(v) {
			return "", "", "the version specifiers are not PEP 440's (==1.2.3, >=1.0,<2, ~=1.2); write NAME==VERSION"
		}
		out = append(out, op+v)
	}
	if len(out) == 1 && strings.HasPrefix(out[0], "==") && !strings.HasPrefix(out[0], "===") {
		return name, out[0][2:], ""
	}
	return name, strings.Join(out, ","), ""
}

// validPEP440Version reports whether v looks like a PEP 440 version (or a
// prefix with .*): it starts with a letter or digit and has only letters,
// digits and . * + ! _ -. The index decides whether it exists.
func validPEP440Version(v string) bool {
	if v == "" || len(v) > maxRequested || !isAlnum(v[0]) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) && !strings.ContainsRune(".*+!_-", rune(v[i])) {
			return false
		}
	}
	return true
}

// checkBin says what is wrong with the name of a package's program (npx
// --package=P BIN, uvx --from P BIN, pipx run --spec P BIN); empty when
// nothing is. It is a name, never a path.
func checkBin(bin string) string {
	switch {
	case bin == "":
		return "the program to run is empty; write the name of one of the package's programs"
	case len(bin) > maxBin:
		return fmt.Sprintf("the program to run is longer than %d bytes; write the name of one of the package's programs", maxBin)
	case strings.ContainsAny(bin, "/\\"):
		return "the program to run is a path; write the name of one of the package's programs, without a path"
	case bin[0] == '.' || bin[0] == '-':
		return "the program to run starts with . or -; write the name of one of the package's programs"
	}
	for i := 0; i < len(bin); i++ {
		c := bin[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != '-' && c != '+' {
			return "the program to run has characters program names do not (letters, digits and . _ - +); write the name of one of the package's programs"
		}
	}
	return ""
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// hasControl reports whether s has an ASCII control character or DEL.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func isAlpha(c byte) bool      { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool      { return isAlpha(c) || c >= '0' && c <= '9' }
func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
