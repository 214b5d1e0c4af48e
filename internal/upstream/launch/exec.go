package launch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gowebpki/jcs"
)

// Exec is how a fetched package's server starts: the interpreter, the
// arguments (the package's program, then the server's own), and the
// directories the sandbox binds read-only for it (the fetched tree, which
// lies in skillgate's hidden data directory).
type Exec struct {
	// Program is the interpreter's absolute path.
	Program string
	// Args are the arguments after Program.
	Args []string
	// Binds are bound read-only in the sandbox (see sandbox.Bubblewrap.Binds).
	Binds []string
	// Dir is the fetched tree and Tree the digest approved for it: a
	// server is started only while Dir still hashes to Tree (see
	// [Verifier]).
	Dir, Tree string
}

// Exec returns how p's server starts from its fetched tree at dir, with
// args (the server's own arguments, as [Launch.Args]). Nothing is
// downloaded: node runs the program from the tree; Python runs the entry
// point with the tree first on its path, in isolated mode (no user site,
// no PYTHON* variables). An interpreter that is gone fails the start, not
// Exec: see [Package.CheckInterpreter].
func (p Package) Exec(dir string, args []string) (Exec, error) {
	if !filepath.IsAbs(dir) {
		return Exec{}, fmt.Errorf("launch: the fetched tree of %s must be an absolute path, not %q", p.Name, dir)
	}
	switch p.Ecosystem {
	case NPM:
		prog := filepath.Join(dir, filepath.FromSlash(p.Bin))
		return Exec{Program: p.Interpreter, Args: append([]string{prog}, args...), Binds: []string{dir}, Dir: dir, Tree: p.Tree}, nil
	case PyPI:
		mod, attr, ok := strings.Cut(p.Bin, ":")
		if !ok || !entryPointPattern.MatchString(p.Bin) {
			return Exec{}, fmt.Errorf("launch: server %s: entry point %q is not module:function", p.Server, p.Bin)
		}
		site, _ := json.Marshal(filepath.Join(dir, SiteDir))
		m, _ := json.Marshal(mod)
		a, _ := json.Marshal(attr)
		// JSON strings of these characters are Python string literals.
		code := "import sys, importlib\nsys.path.insert(0, " + string(site) + ")\nsys.argv[0] = " + string(m) +
			"\no = importlib.import_module(" + string(m) + ")\nfor a in " + string(a) + ".split('.'):\n    o = getattr(o, a)\nsys.exit(o())\n"
		return Exec{Program: p.Interpreter, Args: append([]string{"-I", "-c", code}, args...), Binds: []string{dir}, Dir: dir, Tree: p.Tree}, nil
	}
	return Exec{}, fmt.Errorf("launch: server %s: unknown ecosystem %q", p.Server, p.Ecosystem)
}

// VersionDigest is the digest of a skill version whose servers run the
// fetched packages pkgs: the skill's content digest when there are none,
// else a digest of both, so that a new package version is a new version
// of the skill, and the fetched trees are bound by their digests.
func VersionDigest(content string, pkgs []Package) string {
	if len(pkgs) == 0 {
		return content
	}
	b, _ := json.Marshal(struct {
		Content  string    `json:"content"`
		Packages []Package `json:"packages"`
	}{content, pkgs})
	if canon, err := jcs.Transform(b); err == nil {
		b = canon
	}
	return digestOf(b)
}

// CheckInterpreter returns an error saying what to do when p's
// interpreter is no longer where it was when p was fetched.
func (p Package) CheckInterpreter() error {
	if _, err := os.Stat(p.Interpreter); err != nil {
		return fmt.Errorf("launch: server %s: its interpreter %s is gone (%v); install it there again, or fetch the package anew for the interpreter this machine has (skillgate update)", p.Server, p.Interpreter, err)
	}
	return nil
}
