package launch_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// pyCode is the program Exec gives python for the entry point mod:attr
// of the tree at dir.
func pyCode(dir, mod, attr string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return "import sys, importlib\nsys.path.insert(0, " + q(filepath.Join(dir, launch.SiteDir)) + ")\nsys.argv[0] = " + q(mod) +
		"\no = importlib.import_module(" + q(mod) + ")\nfor a in " + q(attr) + ".split('.'):\n    o = getattr(o, a)\nsys.exit(o())\n"
}

// TestExec checks how a fetched package's server starts, and the
// refusals, word for word.
func TestExec(t *testing.T) {
	t.Parallel()
	npmPkg := launch.Package{Server: "srv", Ecosystem: launch.NPM, Name: "@acme/echo-mcp", Bin: "node_modules/@acme/echo-mcp/dist/index.js",
		Interpreter: "/usr/bin/node", Tree: "sha256:t"}
	pyPkg := launch.Package{Server: "srv", Ecosystem: launch.PyPI, Name: "echo-mcp", Bin: "echo_mcp.server:App.main",
		Interpreter: "/usr/bin/python3", Tree: "sha256:p"}
	with := func(p launch.Package, f func(*launch.Package)) launch.Package { f(&p); return p }
	cases := []struct {
		name string
		p    launch.Package
		dir  string
		args []string
		want launch.Exec
		err  string
	}{{
		name: "npm",
		p:    npmPkg, dir: "/data/packages/srv", args: []string{"--root", "/srv/data", ""},
		want: launch.Exec{Program: "/usr/bin/node", Args: []string{"/data/packages/srv/node_modules/@acme/echo-mcp/dist/index.js", "--root", "/srv/data", ""},
			Binds: []string{"/data/packages/srv"}, Dir: "/data/packages/srv", Tree: "sha256:t"},
	}, {
		name: "npm, no args",
		p:    npmPkg, dir: "/d",
		want: launch.Exec{Program: "/usr/bin/node", Args: []string{"/d/node_modules/@acme/echo-mcp/dist/index.js"}, Binds: []string{"/d"}, Dir: "/d", Tree: "sha256:t"},
	}, {
		name: "pypi",
		p:    pyPkg, dir: "/data/packages/srv", args: []string{"--flag", "x y"},
		want: launch.Exec{Program: "/usr/bin/python3", Args: []string{"-I", "-c", pyCode("/data/packages/srv", "echo_mcp.server", "App.main"), "--flag", "x y"},
			Binds: []string{"/data/packages/srv"}, Dir: "/data/packages/srv", Tree: "sha256:p"},
	}, {
		name: "pypi, a directory that needs quoting",
		p:    pyPkg, dir: `/d/"q"\é` + "\n",
		want: launch.Exec{Program: "/usr/bin/python3", Args: []string{"-I", "-c", pyCode(`/d/"q"\é`+"\n", "echo_mcp.server", "App.main")},
			Binds: []string{`/d/"q"\é` + "\n"}, Dir: `/d/"q"\é` + "\n", Tree: "sha256:p"},
	}, {
		name: "relative directory",
		p:    npmPkg, dir: "packages/srv",
		err: `launch: the fetched tree of @acme/echo-mcp must be an absolute path, not "packages/srv"`,
	}, {
		name: "unknown ecosystem",
		p:    with(npmPkg, func(p *launch.Package) { p.Ecosystem = "cargo" }), dir: "/d",
		err: `launch: server srv: unknown ecosystem "cargo"`,
	}, {
		name: "pypi, not an entry point",
		p:    with(pyPkg, func(p *launch.Package) { p.Bin = "echo_mcp/server.py" }), dir: "/d",
		err: `launch: server srv: entry point "echo_mcp/server.py" is not module:function`,
	}, {
		name: "pypi, code for an entry point",
		p:    with(pyPkg, func(p *launch.Package) { p.Bin = "os:system('id')" }), dir: "/d",
		err: `launch: server srv: entry point "os:system('id')" is not module:function`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string(nil), c.args...)
			got, err := c.p.Exec(c.dir, args)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Errorf("Exec = %+v, %v; want error %s", got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Exec =\n%#v\nwant\n%#v", got, c.want)
			}
			if len(args) > 0 {
				got.Args[len(got.Args)-1] = "changed"
				if !reflect.DeepEqual(args, c.args) {
					t.Errorf("Exec's Args share the caller's: %q", args)
				}
			}
		})
	}
}

// TestExecPython runs the program Exec gives python for entry points of a
// tree written here (no pip needed), at a path that needs quoting: the
// function runs with the tree first on the path, sys.argv[0] the module
// and the server's arguments after it, isolated from PYTHONPATH, and its
// return value is the exit status.
func TestExecPython(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	dir := filepath.Join(t.TempDir(), `tree "q" \ é`)
	mod := filepath.Join(dir, launch.SiteDir, "pkg")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "__init__.py"), "")
	writeFile(t, filepath.Join(mod, "cli.py"), `import json, sys
class App:
    @staticmethod
    def main():
        print(json.dumps({"argv": sys.argv, "first": sys.path[0]}))
        return 3
def plain():
    print("plain")
`)
	// A module of the same name on PYTHONPATH is not what runs.
	decoy := filepath.Join(t.TempDir(), "pkg")
	if err := os.MkdirAll(decoy, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(decoy, "__init__.py"), "raise SystemExit('the decoy ran')\n")
	p := launch.Package{Server: "srv", Ecosystem: launch.PyPI, Name: "pkg", Bin: "pkg.cli:App.main", Interpreter: py}
	e, err := p.Exec(dir, []string{"--x", "a b"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.Program, e.Args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PYTHONPATH=" + filepath.Dir(decoy)}
	out, err := cmd.Output()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 3 {
		t.Fatalf("exit %v, want status 3; output %s", err, out)
	}
	var got struct {
		Argv  []string `json:"argv"`
		First string   `json:"first"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if want := []string{"pkg.cli", "--x", "a b"}; !reflect.DeepEqual(got.Argv, want) {
		t.Errorf("sys.argv = %q, want %q", got.Argv, want)
	}
	if want := filepath.Join(dir, launch.SiteDir); got.First != want {
		t.Errorf("sys.path[0] = %q, want %q", got.First, want)
	}
	p.Bin = "pkg.cli:plain"
	if e, err = p.Exec(dir, nil); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(e.Program, e.Args...).Output(); err != nil || string(out) != "plain\n" {
		t.Errorf("pkg.cli:plain: %q, %v; want plain and status 0", out, err)
	}
}

// TestCheckInterpreter checks the message for an interpreter that is gone.
func TestCheckInterpreter(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := (launch.Package{Server: "srv", Interpreter: self}).CheckInterpreter(); err != nil {
		t.Errorf("CheckInterpreter of an existing interpreter: %v", err)
	}
	gone := filepath.Join(t.TempDir(), "bin", "node")
	err = launch.Package{Server: "srv", Interpreter: gone}.CheckInterpreter()
	want := "launch: server srv: its interpreter " + gone + " is gone (stat " + gone + ": no such file or directory); install it there again, or fetch the package anew for the interpreter this machine has (skillgate update)"
	if err == nil || err.Error() != want {
		t.Errorf("CheckInterpreter = %v, want %s", err, want)
	}
}

// digestPackage is a package with every field set, for VersionDigest.
func digestPackage() launch.Package {
	return launch.Package{
		Server: "srv", Launcher: "npx", Ecosystem: launch.NPM, Name: "echo-mcp", Requested: "^1",
		Version: "1.2.0", Integrity: "sha512-abc", Registry: "https://registry.npmjs.org/",
		Bin: "node_modules/echo-mcp/index.js", Interpreter: "/usr/bin/node",
		Dependencies: []launch.Dependency{{Name: "alpha-lib", Version: "1.0.0", Integrity: "sha512-def"}},
		Scripts:      []launch.Script{{Package: "echo-mcp", Version: "1.2.0", Allowed: true, Why: "needs <it> & é"}},
		Tree:         "sha256:123",
	}
}

// TestVersionDigest pins VersionDigest to the SHA-256 of the canonical
// JSON (RFC 8785: keys sorted, no escapes beyond the necessary) of the
// content digest and the packages, written out here: it does not depend
// on the order of Package's fields or on encoding/json's escaping.
func TestVersionDigest(t *testing.T) {
	t.Parallel()
	const content = "sha256:c0"
	for _, none := range [][]launch.Package{nil, {}} {
		if got := launch.VersionDigest(content, none); got != content {
			t.Errorf("VersionDigest without packages = %s, want the content's %s", got, content)
		}
	}
	canonical := `{"content":"sha256:c0","packages":[{"bin":"node_modules/echo-mcp/index.js","dependencies":[{"integrity":"sha512-def","name":"alpha-lib","version":"1.0.0"}],` +
		`"ecosystem":"npm","integrity":"sha512-abc","interpreter":"/usr/bin/node","launcher":"npx","name":"echo-mcp","registry":"https://registry.npmjs.org/","requested":"^1",` +
		`"scripts":[{"allowed":true,"package":"echo-mcp","version":"1.2.0","why":"needs <it> & é"}],"server":"srv","tree":"sha256:123","version":"1.2.0"}]}`
	sum := sha256.Sum256([]byte(canonical))
	want := "sha256:" + hex.EncodeToString(sum[:])
	if got := launch.VersionDigest(content, []launch.Package{digestPackage()}); got != want {
		t.Errorf("VersionDigest = %s, want %s, the digest of\n%s", got, want, canonical)
	}
	// The same packages read back from JSON (as a lock file keeps them).
	b, err := json.Marshal([]launch.Package{digestPackage()})
	if err != nil {
		t.Fatal(err)
	}
	var back []launch.Package
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := launch.VersionDigest(content, back); got != want {
		t.Errorf("VersionDigest of the packages read back = %s, want %s", got, want)
	}
	// Without the optional fields, they are left out, not empty.
	p := digestPackage()
	p.Requested, p.Scripts, p.Dependencies[0].Integrity = "", nil, ""
	canonical = `{"content":"sha256:c0","packages":[{"bin":"node_modules/echo-mcp/index.js","dependencies":[{"name":"alpha-lib","version":"1.0.0"}],` +
		`"ecosystem":"npm","integrity":"sha512-abc","interpreter":"/usr/bin/node","launcher":"npx","name":"echo-mcp","registry":"https://registry.npmjs.org/",` +
		`"server":"srv","tree":"sha256:123","version":"1.2.0"}]}`
	sum = sha256.Sum256([]byte(canonical))
	if got, want := launch.VersionDigest(content, []launch.Package{p}), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("VersionDigest without optional fields = %s, want %s", got, want)
	}
}

// TestVersionDigestBindsEveryField checks that changing any field of a
// package (found by reflection, so a field added later is covered), of
// its dependencies or scripts, the packages' order or the content gives a
// new digest.
func TestVersionDigestBindsEveryField(t *testing.T) {
	t.Parallel()
	const content = "sha256:c0"
	seen := map[string]string{launch.VersionDigest(content, []launch.Package{digestPackage()}): "base"}
	add := func(what, d string) {
		t.Helper()
		if prev, ok := seen[d]; ok {
			t.Errorf("%s gives the digest of %s", what, prev)
		}
		seen[d] = what
	}
	// change sets the field of v (a struct) at i to another value.
	change := func(t *testing.T, f reflect.Value, name string) {
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Slice:
			if f.Type().Elem().Kind() != reflect.String {
				t.Fatalf("field %s of kind %s: teach this test to change it", name, f.Kind())
			}
			f.Set(reflect.Append(f, reflect.ValueOf("zod@3.25.76")))
		default:
			t.Fatalf("field %s of kind %s: teach this test to change it", name, f.Kind())
		}
	}
	pt := reflect.TypeOf(launch.Package{})
	for i := range pt.NumField() {
		name := pt.Field(i).Name
		switch pt.Field(i).Type {
		case reflect.TypeOf([]launch.Dependency(nil)), reflect.TypeOf([]launch.Script(nil)):
			et := pt.Field(i).Type.Elem()
			for j := range et.NumField() {
				p := digestPackage()
				change(t, reflect.ValueOf(&p).Elem().Field(i).Index(0).Field(j), name+"."+et.Field(j).Name)
				add(name+"."+et.Field(j).Name, launch.VersionDigest(content, []launch.Package{p}))
			}
			p := digestPackage()
			reflect.ValueOf(&p).Elem().Field(i).SetLen(0)
			add(name+" emptied", launch.VersionDigest(content, []launch.Package{p}))
		default:
			p := digestPackage()
			change(t, reflect.ValueOf(&p).Elem().Field(i), name)
			add(name, launch.VersionDigest(content, []launch.Package{p}))
		}
	}
	add("content", launch.VersionDigest(content+"x", []launch.Package{digestPackage()}))
	other := digestPackage()
	other.Server = "other"
	add("a second package", launch.VersionDigest(content, []launch.Package{digestPackage(), other}))
	add("the packages' order", launch.VersionDigest(content, []launch.Package{other, digestPackage()}))
	if len(seen) < 20 {
		t.Errorf("only %d digests compared", len(seen))
	}
	for d := range seen {
		if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
			t.Errorf("digest %q", d)
		}
	}
}
