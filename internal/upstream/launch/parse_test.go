package launch_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// parseCase is one declaration and what Parse makes of it: want when it is
// a launch, err (the exact message) when it cannot be pinned, neither when
// it is not a launcher.
type parseCase struct {
	name    string
	command string
	args    []string
	want    *launch.Launch
	err     string
}

func npm(launcher, pkg, requested, bin string, args ...string) *launch.Launch {
	return &launch.Launch{Launcher: launcher, Ecosystem: launch.NPM, Package: pkg, Requested: requested, Bin: bin, Args: args}
}

func withPackages(l *launch.Launch, with ...string) *launch.Launch {
	l.With = with
	return l
}

func pypi(launcher, pkg, requested, bin string, args ...string) *launch.Launch {
	return &launch.Launch{Launcher: launcher, Ecosystem: launch.PyPI, Package: pkg, Requested: requested, Bin: bin, Args: args}
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string(nil), c.args...)
			l, ok, err := launch.Parse(c.command, args)
			if !reflect.DeepEqual(args, c.args) {
				t.Fatalf("Parse changed its args: %q", args)
			}
			switch {
			case c.err != "":
				if err == nil {
					t.Fatalf("Parse = %+v, %v, nil; want error %q", l, ok, c.err)
				}
				if err.Error() != c.err {
					t.Fatalf("error\n got %s\nwant %s", err, c.err)
				}
				if !errors.Is(err, launch.ErrUnsupported) {
					t.Fatalf("error %v does not wrap ErrUnsupported", err)
				}
				if !ok {
					t.Fatal("ok is false with an error")
				}
				if !reflect.DeepEqual(l, launch.Launch{}) {
					t.Fatalf("Launch %+v with an error", l)
				}
			case c.want != nil:
				if err != nil || !ok {
					t.Fatalf("Parse = %v, %v; want a launch", ok, err)
				}
				if !reflect.DeepEqual(l, *c.want) {
					t.Fatalf("Launch\n got %#v\nwant %#v", l, *c.want)
				}
			default:
				if ok || err != nil {
					t.Fatalf("Parse = %+v, %v, %v; want not a launcher", l, ok, err)
				}
			}
		})
	}
}

func TestParseNotALauncher(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "node", command: "node", args: []string{"server.js"}},
		{name: "node path", command: "/usr/bin/node", args: []string{"/srv/server.js"}},
		{name: "python3", command: "python3", args: []string{"-m", "server"}},
		{name: "relative program", command: "./server", args: []string{"--stdio"}},
		{name: "empty command", command: ""},
		{name: "npx as a directory", command: "/usr/bin/npx/"},
		{name: "windows npx.cmd", command: "npx.cmd", args: []string{"-y", "pkg"}},
		{name: "npx suffix", command: "mynpx", args: []string{"pkg"}},
		{name: "npm start", command: "npm", args: []string{"start"}},
		{name: "npm run", command: "npm", args: []string{"run", "serve"}},
		{name: "npm alone", command: "npm"},
		{name: "npm version flag", command: "npm", args: []string{"--version"}},
		{name: "uv run", command: "uv", args: []string{"run", "server.py"}},
		{name: "uv run with", command: "uv", args: []string{"run", "--with", "mcp", "server.py"}},
		{name: "uv tool install", command: "uv", args: []string{"tool", "install", "pkg"}},
		{name: "uv tool alone", command: "uv", args: []string{"tool"}},
		{name: "uv alone", command: "uv"},
		{name: "pipx install", command: "pipx", args: []string{"install", "pkg"}},
		{name: "pipx alone", command: "pipx"},
		{name: "pipx option then install", command: "pipx", args: []string{"--verbose", "install", "pkg"}},
	})
}

func TestParseNPX(t *testing.T) {
	const x = launch.LauncherNPX
	runParseCases(t, []parseCase{
		{name: "scoped", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-memory"},
			want: npm(x, "@modelcontextprotocol/server-memory", "", "")},
		{name: "absolute path", command: "/usr/bin/npx", args: []string{"-y", "@modelcontextprotocol/server-memory"},
			want: npm(x, "@modelcontextprotocol/server-memory", "", "")},
		{name: "no -y", command: "npx", args: []string{"mcp-server-time"},
			want: npm(x, "mcp-server-time", "", "")},
		{name: "version", command: "npx", args: []string{"--yes", "pkg@1.2.3"},
			want: npm(x, "pkg", "1.2.3", "")},
		{name: "scoped version", command: "npx", args: []string{"-y", "@scope/pkg@2026.8.31", "/data"},
			want: npm(x, "@scope/pkg", "2026.8.31", "", "/data")},
		{name: "caret", command: "npx", args: []string{"-y", "pkg@^1.2"}, want: npm(x, "pkg", "^1.2", "")},
		{name: "tilde", command: "npx", args: []string{"-y", "pkg@~1"}, want: npm(x, "pkg", "~1", "")},
		{name: "range with space", command: "npx", args: []string{"-y", "pkg@>=1 <2"}, want: npm(x, "pkg", ">=1 <2", "")},
		{name: "x range", command: "npx", args: []string{"-y", "pkg@1.x"}, want: npm(x, "pkg", "1.x", "")},
		{name: "or range", command: "npx", args: []string{"-y", "pkg@1 || 2"}, want: npm(x, "pkg", "1 || 2", "")},
		{name: "latest", command: "npx", args: []string{"-y", "pkg@latest"}, want: npm(x, "pkg", "latest", "")},
		{name: "dist-tag", command: "npx", args: []string{"-y", "@scope/pkg@next"}, want: npm(x, "@scope/pkg", "next", "")},
		{name: "prerelease", command: "npx", args: []string{"-y", "pkg@1.0.0-rc.1+build.5"}, want: npm(x, "pkg", "1.0.0-rc.1+build.5", "")},
		{name: "name characters", command: "npx", args: []string{"-y", "a.b_c-d~e9"}, want: npm(x, "a.b_c-d~e9", "", "")},
		{name: "quiet options", command: "npx", args: []string{"-q", "--quiet", "--silent", "-y", "pkg"}, want: npm(x, "pkg", "", "")},
		{name: "-y repeated", command: "npx", args: []string{"-y", "-y", "--yes", "pkg"}, want: npm(x, "pkg", "", "")},
		{name: "args verbatim", command: "npx", args: []string{"-y", "pkg", "--port", "3", "-y"},
			want: npm(x, "pkg", "", "", "--port", "3", "-y")},
		{name: "args keep --", command: "npx", args: []string{"pkg", "--", "--registry=x"},
			want: npm(x, "pkg", "", "", "--", "--registry=x")},
		{name: "args keep control characters", command: "npx", args: []string{"pkg", "a\x00b"},
			want: npm(x, "pkg", "", "", "a\x00b")},
		{name: "dashdash", command: "npx", args: []string{"-y", "--", "pkg@1", "--flag"},
			want: npm(x, "pkg", "1", "", "--flag")},
		{name: "package option", command: "npx", args: []string{"-y", "--package=@scope/tools@1.0.0", "tools-server", "--stdio"},
			want: npm(x, "@scope/tools", "1.0.0", "tools-server", "--stdio")},
		{name: "package option spaced", command: "npx", args: []string{"--package", "tools@^2", "-y", "srv"},
			want: npm(x, "tools", "^2", "srv")},
		{name: "-p", command: "npx", args: []string{"-p", "tools", "srv", "-p", "x"},
			want: npm(x, "tools", "", "srv", "-p", "x")},
		{name: "package then dashdash", command: "npx", args: []string{"-p", "tools", "--", "srv"},
			want: npm(x, "tools", "", "srv")},

		{name: "without a package", command: "npx",
			err: "launch: npx without a package; write the package after its options (npx -y NAME@VERSION)"},
		{name: "only -y repeated", command: "npx", args: []string{"-y", "-y", "--yes", "-y"},
			err: "launch: npx without a package; write the package after its options (npx -y NAME@VERSION)"},
		{name: "only dashdash", command: "npx", args: []string{"--"},
			err: "launch: npx without a package; write the package after its options (npx -y NAME@VERSION)"},
		{name: "-y as the package", command: "npx", args: []string{"--", "-y"},
			err: `launch: npx args[1] "-y": npm package names do not start with . _ or -; write the name as the registry spells it`},
		{name: "registry", command: "npx", args: []string{"--registry=http://evil", "-y", "pkg"},
			err: `launch: npx args[0] "--registry=http://evil": the option --registry is not supported; set the registry in skillgate's configuration (packages.npm.registry) and remove the option`},
		{name: "registry spaced", command: "npx", args: []string{"-y", "--registry", "http://evil", "pkg"},
			err: `launch: npx args[1] "--registry": the option --registry is not supported; set the registry in skillgate's configuration (packages.npm.registry) and remove the option`},
		{name: "call", command: "npx", args: []string{"-c", "pkg --x"},
			err: `launch: npx args[0] "-c": the option -c is not supported; declare the program and its arguments directly (command and args) instead of a command line`},
		{name: "call long", command: "npx", args: []string{"--call=pkg"},
			err: `launch: npx args[0] "--call=pkg": the option --call is not supported; declare the program and its arguments directly (command and args) instead of a command line`},
		{name: "no-install", command: "npx", args: []string{"--no-install", "pkg"},
			err: `launch: npx args[0] "--no-install": the option --no-install is not supported; it would run only what the host already has, while skillgate fetches and pins the package: remove the option`},
		{name: "cache", command: "npx", args: []string{"--cache", "/tmp/c", "pkg"},
			err: `launch: npx args[0] "--cache": the option --cache is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "prefix", command: "npx", args: []string{"--prefix=/opt", "pkg"},
			err: `launch: npx args[0] "--prefix=/opt": the option --prefix is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "node-options", command: "npx", args: []string{"--node-options=--inspect", "pkg"},
			err: `launch: npx args[0] "--node-options=--inspect": the option --node-options is not supported; node's options are not chosen in args: remove the option`},
		{name: "workspace", command: "npx", args: []string{"--workspace", "a", "pkg"},
			err: `launch: npx args[0] "--workspace": the option --workspace is not supported; a launch fetches a package from the registry, not a workspace: remove the option`},
		{name: "ignore-scripts", command: "npx", args: []string{"--ignore-scripts", "pkg"},
			err: `launch: npx args[0] "--ignore-scripts": the option --ignore-scripts is not supported; install scripts never run unless the operator allows the package by name: remove the option`},
		{name: "unknown option", command: "npx", args: []string{"--yes=false", "pkg"},
			err: `launch: npx args[0] "--yes=false": this npx option is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "unknown option with control characters", command: "npx", args: []string{"--x\x1b[31m", "pkg"},
			err: `launch: npx args[0] "--x\x1b[31m": this npx option is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "combined short options", command: "npx", args: []string{"-yq", "pkg"},
			err: `launch: npx args[0] "-yq": this npx option is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "two packages", command: "npx", args: []string{"--package=a@1.0.0", "-p", "b", "--package=zod@3.25.76", "srv", "--x"},
			want: withPackages(npm("npx", "a", "1.0.0", "srv", "--x"), "b", "zod@3.25.76")},
		{name: "second package is git", command: "npx", args: []string{"--package=a", "--package=github:u/r", "srv"},
			err: `launch: npx args[1] "--package=github:u/r": the package is a git repository, which cannot be pinned; publish the server to the npm registry and write NAME@VERSION`},
		{name: "too many packages", command: "npx", args: []string{"-p", "a", "-p", "b", "-p", "c", "-p", "d", "-p", "e", "-p", "f", "-p", "g", "-p", "h", "-p", "i", "-p", "j", "srv"},
			err: `launch: npx args[18] "-p": more than 9 --package options; a launch fetches a server's package and a few packages beside it`},
		{name: "package without value", command: "npx", args: []string{"-y", "--package"},
			err: `launch: npx args[1] "--package": no package follows; write --package=NAME@VERSION PROGRAM`},
		{name: "package without program", command: "npx", args: []string{"-y", "--package=tools"},
			err: "launch: npx --package without a program; write the program to run after it (npx --package=NAME@VERSION PROGRAM)"},
		{name: "package is git", command: "npx", args: []string{"--package=github:u/r", "srv"},
			err: `launch: npx args[0] "--package=github:u/r": the package is a git repository, which cannot be pinned; publish the server to the npm registry and write NAME@VERSION`},
		{name: "spaced package value is quoted", command: "npx", args: []string{"-p", "Tools", "srv"},
			err: `launch: npx args[1] "Tools": npm package names are lowercase; write "tools"`},
		{name: "program is a path", command: "npx", args: []string{"-p", "tools", "../../bin/sh"},
			err: `launch: npx args[2] "../../bin/sh": the program to run is a path; write the name of one of the package's programs, without a path`},
		{name: "program has odd characters", command: "npx", args: []string{"-p", "tools", "srv;rm"},
			err: `launch: npx args[2] "srv;rm": the program to run has characters program names do not (letters, digits and . _ - +); write the name of one of the package's programs`},
		{name: "program is empty", command: "npx", args: []string{"-p", "tools", ""},
			err: `launch: npx args[2] "": the program to run is empty; write the name of one of the package's programs`},
	})
}

func TestParseNPMSpecs(t *testing.T) {
	const (
		git      = "the package is a git repository, which cannot be pinned; publish the server to the npm registry and write NAME@VERSION"
		url      = "the package is a URL, which cannot be pinned; write a registry package as NAME@VERSION"
		path     = "the package is a path on the host, which cannot be pinned; declare the server's program itself as the command, or publish it to the npm registry and write NAME@VERSION"
		alias    = "the package is an npm alias (npm:), which is not supported; write the package itself as NAME@VERSION"
		short    = "the package is GitHub shorthand (USER/REPO) for a git repository, which cannot be pinned; publish the server to the npm registry and write NAME@VERSION (a scoped package is @SCOPE/NAME)"
		afterAt  = "the package names a git repository, URL or path after @, which cannot be pinned; write a registry version (NAME@1.2.3)"
		chars    = "the package name has characters npm package names do not (they use a-z 0-9 - . _ ~, after @SCOPE/ for a scoped one); write NAME@VERSION"
		leading  = "npm package names do not start with . _ or -; write the name as the registry spells it"
		scoped   = "a scoped package is @SCOPE/NAME; write it so, as @SCOPE/NAME@VERSION"
		noVer    = "the package has no version after @; write NAME@VERSION, or NAME alone for the newest"
		badVer   = "the version after @ is not a version, range or dist-tag; write NAME@1.2.3"
		tarball  = "the package is a tarball file on the host, which cannot be pinned; publish it to the npm registry and write NAME@VERSION"
		control  = "the package contains a control character; write it as NAME@VERSION"
		tooLong  = "the package name is longer than 214 characters, npm's limit"
		empty    = "the package is empty; write it as NAME@VERSION"
		spaceVer = "the version after @ starts or ends with a space; write NAME@1.2.3"
	)
	long := strings.Repeat("a", 215)
	cases := []struct{ spec, problem string }{
		{"github:u/r", git},
		{"GitHub:u/r#v1", git},
		{"gitlab:u/r", git},
		{"bitbucket:u/r", git},
		{"gist:abc", git},
		{"git+https://github.com/u/r.git", git},
		{"git+ssh://git@github.com/u/r.git", git},
		{"git://github.com/u/r.git", git},
		{"git@github.com:u/r.git", git},
		{"https://registry.example/pkg-1.0.0.tgz", url},
		{"http://evil/x.tgz", url},
		{"file:../pkg", path},
		{"./server", path},
		{"../server", path},
		{"/abs/path", path},
		{"~/x", path},
		{".", path},
		{`C:\srv\pkg`, path},
		{"npm:pkg@1", alias},
		{"pkg@npm:other@1", alias},
		{"u/r", short},
		{"u/r#main", short},
		{`u\r`, short},
		{"pkg@github:u/r", afterAt},
		{"pkg@https://x/y.tgz", afterAt},
		{"pkg@file:../x", afterAt},
		{"pkg@u/r", afterAt},
		{"pkg@1#x", afterAt},
		{"evil.com:pkg", url},
		{"pkg.tgz", tarball},
		{"pkg.tar.gz", tarball},
		{"Pkg", `npm package names are lowercase; write "pkg"`},
		{"@Scope/pkg@1", `npm package names are lowercase; write "@scope/pkg"`},
		{"pkg name", chars},
		{"pkg$", chars},
		{"pkg!", chars},
		{"pkg\u00e9", chars},
		{"_pkg", leading},
		{"@scope/.pkg", leading},
		{"@scope", scoped},
		{"@/pkg", scoped},
		{"@scope/", scoped},
		{"@scope/a/b", scoped},
		{"@", scoped},
		{"pkg@", noVer},
		{"@scope/pkg@", noVer},
		{"pkg@1.0;rm", badVer},
		{"pkg@$(x)", badVer},
		{"pkg@ 1", spaceVer},
		{"pkg@1 ", spaceVer},
		{"pkg\x00", control},
		{"pkg@1\n", control},
		{"\x7f", control},
		{long, tooLong},
		{"", empty},
	}
	var table []parseCase
	for _, c := range cases {
		table = append(table, parseCase{
			name: c.spec, command: "npx", args: []string{"-y", c.spec},
			err: "launch: npx args[1] " + quoteBounded(c.spec) + ": " + c.problem,
		})
	}
	table = append(table,
		parseCase{name: "longest name", command: "npx", args: []string{strings.Repeat("a", 214)},
			want: npm(launch.LauncherNPX, strings.Repeat("a", 214), "", "")},
		parseCase{name: "long version", command: "npx", args: []string{"pkg@" + strings.Repeat("1", 257)},
			err: `launch: npx args[0] "pkg@` + strings.Repeat("1", 124) + `"… (261 bytes): the version after @ is longer than 256 bytes; write NAME@1.2.3`},
	)
	runParseCases(t, table)
}

// quoteBounded is how messages quote a declaration's text: Go quoted,
// cut at 128 bytes.
func quoteBounded(s string) string { return strictjson.Quote(s, 128) }

func TestParseNPMExec(t *testing.T) {
	const x = launch.LauncherNPMExec
	runParseCases(t, []parseCase{
		{name: "exec", command: "npm", args: []string{"exec", "-y", "pkg@1.2.3"}, want: npm(x, "pkg", "1.2.3", "")},
		{name: "x", command: "npm", args: []string{"x", "--yes", "@scope/pkg"}, want: npm(x, "@scope/pkg", "", "")},
		{name: "path", command: "/usr/local/bin/npm", args: []string{"exec", "pkg", "/data"}, want: npm(x, "pkg", "", "", "/data")},
		{name: "dashdash before package", command: "npm", args: []string{"exec", "-y", "--", "pkg", "--port", "3", "--", "-y"},
			want: npm(x, "pkg", "", "", "--port", "3", "--", "-y")},
		{name: "dashdash after package", command: "npm", args: []string{"exec", "pkg", "stdio", "--", "--port", "3"},
			want: npm(x, "pkg", "", "", "stdio", "--port", "3")},
		{name: "package option", command: "npm", args: []string{"exec", "--package=tools@2", "-y", "--", "srv", "--flag"},
			want: npm(x, "tools", "2", "srv", "--flag")},
		{name: "lone dash is an argument", command: "npm", args: []string{"exec", "pkg", "-"},
			want: npm(x, "pkg", "", "", "-")},

		{name: "without a package", command: "npm", args: []string{"exec", "-y"},
			err: "launch: npm exec without a package; write the package after its options (npm exec -y NAME@VERSION)"},
		{name: "option after the package", command: "npm", args: []string{"exec", "-y", "pkg", "--port", "3"},
			err: `launch: npm exec args[3] "--port": npm exec reads options after the package as its own; write -- before the package (npm exec -y -- NAME@VERSION ARGS)`},
		{name: "option after the program", command: "npm", args: []string{"x", "-p", "tools", "srv", "stdio", "-v"},
			err: `launch: npm exec args[5] "-v": npm exec reads options after the package as its own; write -- before the package (npm exec -y -- NAME@VERSION ARGS)`},
		{name: "registry", command: "npm", args: []string{"exec", "--registry=http://evil", "pkg"},
			err: `launch: npm exec args[1] "--registry=http://evil": the option --registry is not supported; set the registry in skillgate's configuration (packages.npm.registry) and remove the option`},
		{name: "git", command: "npm", args: []string{"exec", "--", "git+https://x/y.git"},
			err: `launch: npm exec args[2] "git+https://x/y.git": the package is a git repository, which cannot be pinned; publish the server to the npm registry and write NAME@VERSION`},
		{name: "options before exec", command: "npm", args: []string{"-y", "exec", "pkg"},
			err: `launch: npm args[0] "-y": options before npm's subcommand are not supported; write exec first (npm exec -y NAME@VERSION)`},
		{name: "registry before x", command: "npm", args: []string{"--registry", "http://evil", "x", "pkg"},
			err: `launch: npm args[0] "--registry": options before npm's subcommand are not supported; write exec first (npm exec -y NAME@VERSION)`},
	})
}

func TestParseUV(t *testing.T) {
	const (
		x = launch.LauncherUVX
		u = launch.LauncherUVTool
	)
	runParseCases(t, []parseCase{
		{name: "uvx", command: "uvx", args: []string{"mcp-server-time", "--local-timezone=UTC"},
			want: pypi(x, "mcp-server-time", "", "", "--local-timezone=UTC")},
		{name: "uvx path", command: "/usr/local/bin/uvx", args: []string{"mcp-server-fetch"}, want: pypi(x, "mcp-server-fetch", "", "")},
		{name: "at version", command: "uvx", args: []string{"mcp-server-git@2025.1.14"}, want: pypi(x, "mcp-server-git", "2025.1.14", "")},
		{name: "at latest", command: "uvx", args: []string{"pkg@latest"}, want: pypi(x, "pkg", "", "")},
		{name: "equals", command: "uvx", args: []string{"pkg==1.2.3"}, want: pypi(x, "pkg", "1.2.3", "")},
		{name: "equals wildcard", command: "uvx", args: []string{"pkg==1.*"}, want: pypi(x, "pkg", "1.*", "")},
		{name: "arbitrary equality", command: "uvx", args: []string{"pkg===1.0"}, want: pypi(x, "pkg", "===1.0", "")},
		{name: "range", command: "uvx", args: []string{"pkg>=1.0"}, want: pypi(x, "pkg", ">=1.0", "")},
		{name: "two clauses", command: "uvx", args: []string{"pkg>=1,<2"}, want: pypi(x, "pkg", ">=1,<2", "")},
		{name: "spaces dropped", command: "uvx", args: []string{"pkg >= 1.0 , < 2"}, want: pypi(x, "pkg", ">=1.0,<2", "")},
		{name: "compatible", command: "uvx", args: []string{"pkg~=1.2"}, want: pypi(x, "pkg", "~=1.2", "")},
		{name: "not equal", command: "uvx", args: []string{"pkg!=1.5"}, want: pypi(x, "pkg", "!=1.5", "")},
		{name: "equals with another clause", command: "uvx", args: []string{"pkg==1.*,!=1.5"}, want: pypi(x, "pkg", "==1.*,!=1.5", "")},
		{name: "name kept as declared", command: "uvx", args: []string{"My_Pkg.Name==1.0rc1"}, want: pypi(x, "My_Pkg.Name", "1.0rc1", "")},
		{name: "epoch and local", command: "uvx", args: []string{"pkg==1!2.0+local.1"}, want: pypi(x, "pkg", "1!2.0+local.1", "")},
		{name: "one character", command: "uvx", args: []string{"a"}, want: pypi(x, "a", "", "")},
		{name: "quiet", command: "uvx", args: []string{"-q", "--quiet", "pkg", "-q"}, want: pypi(x, "pkg", "", "", "-q")},
		{name: "from", command: "uvx", args: []string{"--from", "mcp-server-git==2025.1.14", "mcp-server-git", "--repository", "/r"},
			want: pypi(x, "mcp-server-git", "2025.1.14", "mcp-server-git", "--repository", "/r")},
		{name: "from equals", command: "uvx", args: []string{"--from=tools@1.0", "srv"}, want: pypi(x, "tools", "1.0", "srv")},
		{name: "from range", command: "uvx", args: []string{"--from", "tools>=1,<2", "-q", "srv"}, want: pypi(x, "tools", ">=1,<2", "srv")},
		{name: "dashdash", command: "uvx", args: []string{"-q", "--", "pkg", "--x"}, want: pypi(x, "pkg", "", "", "--x")},
		{name: "dashdash then an option", command: "uvx", args: []string{"--", "-q"},
			err: `launch: uvx args[1] "-q": the package does not start with a Python package name (letters, digits and . _ - inside); write NAME==VERSION`},
		{name: "args verbatim", command: "uvx", args: []string{"pkg", "--python", "3.12", "--index-url", "x"},
			want: pypi(x, "pkg", "", "", "--python", "3.12", "--index-url", "x")},
		{name: "uv tool run", command: "uv", args: []string{"tool", "run", "pkg==1"}, want: pypi(u, "pkg", "1", "")},
		{name: "uv tool run from", command: "/usr/bin/uv", args: []string{"tool", "run", "--from", "tools", "srv", "a"},
			want: pypi(u, "tools", "", "srv", "a")},

		{name: "without a package", command: "uvx",
			err: "launch: uvx without a package; write the package after its options (uvx NAME==VERSION)"},
		{name: "uv tool run without a package", command: "uv", args: []string{"tool", "run", "-q"},
			err: "launch: uv tool run without a package; write the package after its options (uv tool run NAME==VERSION)"},
		{name: "from without a program", command: "uvx", args: []string{"--from", "tools"},
			err: "launch: uvx --from without a program; write the program to run after the package (uvx --from NAME==VERSION PROGRAM)"},
		{name: "from without a value", command: "uvx", args: []string{"--from"},
			err: `launch: uvx args[0] "--from": no package follows; write --from NAME==VERSION PROGRAM`},
		{name: "two from", command: "uvx", args: []string{"--from", "a", "--from=b", "srv"},
			err: `launch: uvx args[2] "--from=b": a second --from; a launch fetches one package: declare the others as dependencies of the server's package`},
		{name: "index-url", command: "uvx", args: []string{"--index-url", "http://evil/simple", "pkg"},
			err: `launch: uvx args[0] "--index-url": the option --index-url is not supported; set the index in skillgate's configuration (packages.pypi.index) and remove the option`},
		{name: "extra-index-url", command: "uv", args: []string{"tool", "run", "--extra-index-url=http://evil", "pkg"},
			err: `launch: uv tool run args[2] "--extra-index-url=http://evil": the option --extra-index-url is not supported; set the index in skillgate's configuration (packages.pypi.index) and remove the option`},
		{name: "with", command: "uvx", args: []string{"--with", "requests", "pkg"},
			err: `launch: uvx args[0] "--with": the option --with is not supported; declare the extra package as a dependency of the server's package, and remove the option`},
		{name: "python", command: "uvx", args: []string{"--python", "3.12", "pkg"},
			err: `launch: uvx args[0] "--python": the option --python is not supported; the Python that runs the server is not chosen in args: remove the option`},
		{name: "offline", command: "uvx", args: []string{"--offline", "pkg"},
			err: `launch: uvx args[0] "--offline": the option --offline is not supported; it would run only what the host already has, while skillgate fetches and pins the package: remove the option`},
		{name: "refresh", command: "uvx", args: []string{"--refresh", "pkg"},
			err: `launch: uvx args[0] "--refresh": the option --refresh is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "unknown", command: "uvx", args: []string{"--isolated", "pkg"},
			err: `launch: uvx args[0] "--isolated": this uvx option is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "options before tool run", command: "uv", args: []string{"--offline", "tool", "run", "pkg"},
			err: `launch: uv args[0] "--offline": options before uv's subcommand are not supported; write tool run first (uv tool run NAME==VERSION)`},
		{name: "from program is a path", command: "uvx", args: []string{"--from", "tools", "/bin/sh"},
			err: `launch: uvx args[2] "/bin/sh": the program to run is a path; write the name of one of the package's programs, without a path`},
		{name: "from is a URL", command: "uvx", args: []string{"--from", "git+https://github.com/u/r", "srv"},
			err: `launch: uvx args[1] "git+https://github.com/u/r": the package is a URL or path, which cannot be pinned; publish it to the index and write NAME==VERSION`},
	})
}

func TestParsePyPISpecs(t *testing.T) {
	const (
		urlPath = "the package is a URL or path, which cannot be pinned; publish it to the index and write NAME==VERSION"
		extras  = "extras are not supported; name the package without them (NAME==VERSION) and declare what the extra brings as dependencies of the server's package"
		markers = "environment markers (;) are not supported; write the package as NAME==VERSION"
		noName  = "the package does not start with a Python package name (letters, digits and . _ - inside); write NAME==VERSION"
		chars   = "the package name has characters Python package names do not (letters, digits and . _ -); write NAME==VERSION"
		specs   = "the version specifiers are not PEP 440's (==1.2.3, >=1.0,<2, ~=1.2); write NAME==VERSION"
		noVer   = "the package has no version after @; write NAME@VERSION, or NAME alone for the newest"
		badAt   = "the version after @ is not a version; write NAME@1.2.3, or NAME==VERSION, or a range such as NAME>=1,<2"
		control = "the package contains a control character; write it as NAME==VERSION"
		empty   = "the package is empty; write it as NAME==VERSION"
	)
	cases := []struct{ spec, problem string }{
		{"git+https://github.com/u/r", urlPath},
		{"https://files.example/pkg-1.0-py3-none-any.whl", urlPath},
		{"pkg @ https://x/pkg.whl", urlPath},
		{"file:pkg", urlPath},
		{"./pkg", urlPath},
		{"/abs/pkg", urlPath},
		{"~/pkg", urlPath},
		{"dir/pkg", urlPath},
		{`C:\pkg`, urlPath},
		{"pkg[cli]", extras},
		{"pkg[cli]==1.0", extras},
		{"pkg; python_version>'3'", markers},
		{"_pkg", noName},
		{"pkg-", noName},
		{"pkg.", noName},
		{"==1.0", noName},
		{"pkg$", chars},
		{"pkg 1.0", chars},
		{"pkg==", specs},
		{"pkg>=", specs},
		{"pkg=1.0", specs},
		{"pkg>=1,", specs},
		{"pkg==1.0 rc", specs},
		{"pkg==$(id)", specs},
		{"pkg@", noVer},
		{"pkg@>=1", badAt},
		{"pkg@1.0 extra", badAt},
		{"pkg@ 1.0", badAt},
		{"pkg @1.0", "NAME @ ... is a direct reference (a URL), which cannot be pinned; write NAME==VERSION"},
		{"pkg\x00", control},
		{"pkg==1\x1b", control},
		{"", empty},
	}
	var table []parseCase
	for _, c := range cases {
		table = append(table, parseCase{
			name: "uvx " + c.spec, command: "uvx", args: []string{c.spec},
			err: "launch: uvx args[0] " + quoteBounded(c.spec) + ": " + c.problem,
		})
	}
	long := "p" + strings.Repeat("==1", 200)
	table = append(table, parseCase{name: "long spec", command: "uvx", args: []string{long},
		err: "launch: uvx args[0] " + quoteBounded(long) + ": the package is longer than 512 bytes; write it as NAME==VERSION"})
	runParseCases(t, table)
}

func TestParsePipx(t *testing.T) {
	const x = launch.LauncherPipx
	runParseCases(t, []parseCase{
		{name: "run", command: "pipx", args: []string{"run", "mcp-server-time"}, want: pypi(x, "mcp-server-time", "", "")},
		{name: "path", command: "/usr/bin/pipx", args: []string{"run", "pkg==1.0", "--x"}, want: pypi(x, "pkg", "1.0", "", "--x")},
		{name: "range", command: "pipx", args: []string{"run", "pkg>=1,<2"}, want: pypi(x, "pkg", ">=1,<2", "")},
		{name: "spec", command: "pipx", args: []string{"run", "--spec", "tools==2.0", "srv", "--port", "3"},
			want: pypi(x, "tools", "2.0", "srv", "--port", "3")},
		{name: "spec equals", command: "pipx", args: []string{"run", "--spec=tools", "-q", "--no-cache", "srv"},
			want: pypi(x, "tools", "", "srv")},
		{name: "quiet", command: "pipx", args: []string{"run", "--quiet", "pkg", "--spec", "x"}, want: pypi(x, "pkg", "", "", "--spec", "x")},

		{name: "without a package", command: "pipx", args: []string{"run"},
			err: "launch: pipx run without a package; write the package after its options (pipx run NAME==VERSION)"},
		{name: "spec without a program", command: "pipx", args: []string{"run", "--spec", "tools"},
			err: "launch: pipx run --spec without a program; write the program to run after the package (pipx run --spec NAME==VERSION PROGRAM)"},
		{name: "spec without a value", command: "pipx", args: []string{"run", "--spec"},
			err: `launch: pipx run args[1] "--spec": no package follows; write --spec NAME==VERSION PROGRAM`},
		{name: "two specs", command: "pipx", args: []string{"run", "--spec=a", "--spec", "b", "srv"},
			err: `launch: pipx run args[2] "--spec": a second --spec; a launch fetches one package: declare the others as dependencies of the server's package`},
		{name: "uv's at form", command: "pipx", args: []string{"run", "pkg@1.0"},
			err: `launch: pipx run args[1] "pkg@1.0": NAME @ ... is a direct reference (a URL), which cannot be pinned; write NAME==VERSION`},
		{name: "index-url", command: "pipx", args: []string{"run", "--index-url", "http://evil", "pkg"},
			err: `launch: pipx run args[1] "--index-url": the option --index-url is not supported; set the index in skillgate's configuration (packages.pypi.index) and remove the option`},
		{name: "pip-args", command: "pipx", args: []string{"run", "--pip-args=--pre", "pkg"},
			err: `launch: pipx run args[1] "--pip-args=--pre": the option --pip-args is not supported; pip's options are set in skillgate's configuration (packages.pypi), not in args: remove the option`},
		{name: "python", command: "pipx", args: []string{"run", "--python", "python3.12", "pkg"},
			err: `launch: pipx run args[1] "--python": the option --python is not supported; the Python that runs the server is not chosen in args: remove the option`},
		{name: "dashdash", command: "pipx", args: []string{"run", "--", "pkg"},
			err: `launch: pipx run args[1] "--": the option -- is not supported; remove the option and write the package right after pipx run's options`},
		{name: "unknown", command: "pipx", args: []string{"run", "--verbose", "pkg"},
			err: `launch: pipx run args[1] "--verbose": this pipx run option is not supported; skillgate fetches the package with its own settings: remove the option`},
		{name: "spec is a URL", command: "pipx", args: []string{"run", "--spec", "https://x/y.whl", "srv"},
			err: `launch: pipx run args[2] "https://x/y.whl": the package is a URL or path, which cannot be pinned; publish it to the index and write NAME==VERSION`},
		{name: "options before run", command: "pipx", args: []string{"--verbose", "run", "pkg"},
			err: `launch: pipx args[0] "--verbose": options before pipx's subcommand are not supported; write run first (pipx run NAME==VERSION)`},
	})
}

// TestParseSpec checks that what Parse records is what the ecosystem's
// client is asked for.
func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		command string
		args    []string
		spec    string
	}{
		{"npx", []string{"-y", "@scope/pkg@^1.2"}, "@scope/pkg@^1.2"},
		{"npx", []string{"pkg"}, "pkg"},
		{"uvx", []string{"pkg@1.2.3"}, "pkg==1.2.3"},
		{"uvx", []string{"pkg@latest"}, "pkg"},
		{"uvx", []string{"pkg >= 1.0, < 2"}, "pkg>=1.0,<2"},
		{"pipx", []string{"run", "pkg~=1.2"}, "pkg~=1.2"},
		{"pipx", []string{"run", "pkg===1.0"}, "pkg===1.0"},
	} {
		l, ok, err := launch.Parse(c.command, c.args)
		if !ok || err != nil {
			t.Fatalf("Parse(%q, %q) = %v, %v", c.command, c.args, ok, err)
		}
		if got := l.Spec(); got != c.spec {
			t.Errorf("Parse(%q, %q).Spec() = %q, want %q", c.command, c.args, got, c.spec)
		}
	}
}

// TestParseHostile checks that hostile declarations are refused with
// bounded messages, and that Parse copes with many and long args.
func TestParseHostile(t *testing.T) {
	huge := strings.Repeat("\x00\u202e", 100000)
	many := make([]string, 10000)
	for i := range many {
		many[i] = "-y"
	}
	for _, args := range [][]string{
		{huge},
		{"-y", huge},
		{"--registry=" + huge},
		{"-p", huge, "srv"},
		{"-p", "pkg", huge},
		many,
		append(append([]string{}, many...), "pkg@"+huge),
	} {
		_, ok, err := launch.Parse("npx", args)
		if !ok || !errors.Is(err, launch.ErrUnsupported) {
			t.Fatalf("Parse = %v, %v; want ErrUnsupported", ok, err)
		}
		if len(err.Error()) > 600 {
			t.Fatalf("message of %d bytes", len(err.Error()))
		}
		if strings.ContainsAny(err.Error(), "\x00\u202e") {
			t.Fatalf("message carries hostile characters: %q", err)
		}
	}
	l, ok, err := launch.Parse("npx", append(append([]string{}, many...), "pkg"))
	if !ok || err != nil || l.Package != "pkg" {
		t.Fatalf("Parse = %+v, %v, %v", l, ok, err)
	}
}
