package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// ErrHiddenInterpreter means a server's program, or an interpreter that
// runs it (a script's #! line, #!/usr/bin/env NAME resolved on its PATH),
// lies in a hidden directory and is installed where the sandbox cannot
// bind it back without exposing a hidden one: a home directory as a
// whole, the root directory, skillgate's data directory, or a directory
// that holds or lies in another hidden path. The server is not started:
// it would only have failed inside the sandbox with "module not found" or
// ENOENT. The error names the path, the program it runs, the installation
// directory, why, and the fix.
var ErrHiddenInterpreter = errors.New("sandbox: an interpreter is installed where a confined server cannot see it")

// maxInterpreterDepth is how many #! lines a chain may follow, as the
// kernel's own bound on nested interpreters (BINPRM_MAX_RECURSION).
const maxInterpreterDepth = 4

// hiddenInterpreterError is an [ErrHiddenInterpreter] with its message.
type hiddenInterpreterError struct{ msg string }

func (e *hiddenInterpreterError) Error() string { return e.msg }
func (e *hiddenInterpreterError) Unwrap() error { return ErrHiddenInterpreter }

// Interpreters returns what a confined program needs bound read-only to
// run when it, or what runs it, is installed under a hidden directory
// (the sandbox hides /root and /home, so node from nvm under ~/.nvm,
// python from pyenv under ~/.pyenv/versions/X or anything in ~/.local/bin
// would be missing inside it). It checks before the server starts,
// rather than letting the server fail inside the sandbox with "module
// not found".
//
// program is the command's resolved absolute path (exec.Cmd.Path), env
// the server's environment (its PATH, or else skillgate's, resolves
// #!/usr/bin/env NAME) and hide the directories the sandbox hides besides
// the usual ones ([Bubblewrap.Hide]). The chain is the program, then the
// interpreter its #! line names (for #!/usr/bin/env [OPTIONS] [VAR=value]
// NAME, env and NAME found on PATH), then that interpreter's, at most 4
// deep. A chain that loops, or goes deeper, is an error; so is a program
// or interpreter that cannot be read, and a NAME not on PATH.
//
// Each path of the chain that lies in a hidden path (as written, at each
// symbolic link on the way to its target, and as resolved: a link in
// /usr/local/bin into ~/.nvm counts) needs its installation directory:
// the directory that holds bin or sbin when the path lies directly in
// one (~/.nvm/versions/node/v20.1.0 for ~/.nvm/versions/node/v20.1.0/bin/node),
// else the directory that holds the path. Interpreters returns one
// read-only grant per installation directory, in chain order, saying in
// From what needs it ("program", or "interpreter of SCRIPT (#!LINE)").
// An installation directory that is /, /root, /home, a user's home
// directory as a whole (a directory of /home), that is, holds or lies in
// another hidden path (skillgate's data directory, /etc/ssh, …), is not
// bound: Interpreters fails with [ErrHiddenInterpreter]. Paths outside
// the hidden ones need nothing: the sandbox shows the host's file system
// read-only.
//
// A path lying in one of visible (what the sandbox shows anyway: the
// server's working directory, its skill's tree, and [Bubblewrap.Binds])
// needs nothing. [Bubblewrap.Confine] calls it for every command, with
// those, and binds what it returns.
func Interpreters(program string, env, hide, visible []string) ([]capability.Grant, error) {
	return interpreters(program, env, hide, visible)
}

// interpreters is [Interpreters], except that a path lying in one of
// visible (directories the sandbox binds anyway) needs nothing.
func interpreters(program string, env, hide, visible []string) ([]capability.Grant, error) {
	hidden := hiddenPaths(hide)
	path := pathOf(env)
	var out []capability.Grant
	// need adds the installation directories p needs (p runs of, with
	// from saying what needs it), or refuses p.
	need := func(p, of, from string) error {
		for _, f := range linkHops(p) {
			if !isHidden(f, hidden) || slices.ContainsFunc(visible, func(v string) bool { return inside(f, v) }) {
				continue
			}
			inst := installation(f)
			if why := unbindable(inst, hidden); why != "" {
				what := "the program " + p
				if of != "" {
					what = "the interpreter " + p
				}
				if f != p {
					what += " (a link to " + f + ")"
				}
				if of != "" {
					what += " of " + of
				}
				name := filepath.Base(f)
				return &hiddenInterpreterError{fmt.Sprintf("sandbox: %s is installed in %s, %s: install it in a directory of its own (such as /opt/%s or ~/.local/%s) or under /usr/local, then declare that path",
					what, inst, why, name, name)}
			}
			if !slices.ContainsFunc(out, func(g capability.Grant) bool { return g.Path == inst }) {
				out = append(out, capability.Grant{Path: inst, Access: capability.GrantReadOnly, From: from})
			}
		}
		return nil
	}

	cur, of, from := program, "", "program"
	var walked []string // the real paths of the scripts read, for loops
	for depth := 0; ; depth++ {
		if err := need(cur, of, from); err != nil {
			return nil, err
		}
		what := "the program " + cur
		if of != "" {
			what = "the interpreter " + cur + " of " + of
		}
		st, err := os.Stat(cur)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %s cannot be read: %w", what, errors.Unwrap(err))
		}
		if !st.Mode().IsRegular() {
			return out, nil // not a script (and never read: it may be a FIFO)
		}
		line, err := shebang(cur)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %s cannot be read: %w", what, err)
		}
		if line == nil {
			return out, nil // a binary, or no interpreter named
		}
		real, err := filepath.EvalSymlinks(cur)
		if err != nil {
			real = cur
		}
		if slices.Contains(walked, real) {
			return nil, fmt.Errorf("sandbox: the #! lines of %s form a loop (%s): the kernel would refuse to run it",
				program, strings.Join(append(walked, real), " -> "))
		}
		if depth == maxInterpreterDepth {
			return nil, fmt.Errorf("sandbox: the #! lines of %s nest more than %d deep (%s): the kernel would refuse to run it",
				program, maxInterpreterDepth, strings.Join(append(walked, real, line[0]), " -> "))
		}
		walked = append(walked, real)
		text := "#!" + strings.Join(line, " ")
		next, from2 := line[0], "interpreter of "+cur+" ("+text+")"
		if !filepath.IsAbs(next) {
			return out, nil // relative to the working directory: nothing to judge
		}
		next = filepath.Clean(next)
		if filepath.Base(next) == "env" && len(line) > 1 {
			// env itself, then the program it runs.
			if err := need(next, cur, from2); err != nil {
				return nil, err
			}
			name := envProgram(line[1:])
			switch {
			case name == "":
				return out, nil
			case strings.Contains(name, "/"):
				if !filepath.IsAbs(name) {
					return out, nil
				}
				next = filepath.Clean(name)
			default:
				found := lookPath(name, path)
				if found == "" {
					return nil, fmt.Errorf("sandbox: the interpreter %s of %s (%s) is not on PATH (%s)", name, cur, text, path)
				}
				next = found
			}
		}
		cur, of, from = next, cur, from2
	}
}

// shebang returns the words of path's #! line (the interpreter, then its
// argument split at blanks), read from its first 256 bytes, or nil when
// it has none.
func shebang(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.Unwrap(err)
	}
	head, ok := strings.CutPrefix(string(buf[:n]), "#!")
	if !ok {
		return nil, nil
	}
	head, _, _ = strings.Cut(head, "\n")
	words := strings.Fields(head)
	if len(words) == 0 {
		return nil, nil
	}
	return words, nil
}

// envProgram returns the program that env runs given args (the words of
// a #!/usr/bin/env line after env): the first word that is neither one of
// env's options (and their values) nor a VAR=value assignment, or "".
func envProgram(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" || a == "-P":
			i++ // the option's value
		case strings.HasPrefix(a, "-S") && len(a) > 2:
			return envProgram(append([]string{a[2:]}, args[i+1:]...))
		case strings.HasPrefix(a, "-"):
			// -S, -i, -v, --ignore-environment, --unset=NAME, …
		case strings.Contains(a, "="):
			// VAR=value
		default:
			return a
		}
	}
	return ""
}

// pathOf returns the PATH of env (its last setting), or skillgate's own
// when env sets none.
func pathOf(env []string) string {
	path, set := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, set = v, true
		}
	}
	if !set {
		path = os.Getenv("PATH")
	}
	return path
}

// lookPath returns the first executable regular file named name in the
// absolute directories of path, as found there (not resolved), or "".
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// isHidden reports whether p is or lies in a hidden path.
func isHidden(p string, hidden []hiddenPath) bool {
	for _, h := range hidden {
		if inside(p, h.path) {
			return true
		}
	}
	return false
}

// installation returns the directory an interpreter at p is installed
// in: the one that holds bin or sbin when p lies directly in one, else
// the one that holds p.
func installation(p string) string {
	dir := filepath.Dir(p)
	if b := filepath.Base(dir); b == "bin" || b == "sbin" {
		return filepath.Dir(dir)
	}
	return dir
}

// unbindable says why the installation directory inst (as named, and
// with its symbolic links resolved) may not be bound in a sandbox with
// these hidden paths, or "" when it may.
func unbindable(inst string, hidden []hiddenPath) string {
	forms := []string{inst}
	if r, err := filepath.EvalSymlinks(inst); err == nil && r != inst {
		forms = append(forms, r)
	}
	is := func(c, dir string) bool { return inside(c, dir) && inside(dir, c) }
	for _, c := range forms {
		switch {
		case c == "/":
			return "the root directory, which a confined server never sees as a whole"
		case is(c, "/root"):
			return "root's home directory, which a confined server never sees as a whole"
		case is(c, "/home"):
			return "the users' home directories, which a confined server never sees as a whole"
		case is(filepath.Dir(c), "/home"):
			return "a home directory, which a confined server never sees as a whole"
		}
	}
	for _, c := range forms {
		for _, h := range hidden {
			hforms := []string{h.path}
			if r, err := filepath.EvalSymlinks(h.path); err == nil && r != h.path {
				hforms = append(hforms, r)
			}
			for _, f := range hforms {
				switch {
				case c == f:
					return h.what + ", which a confined server never sees"
				case strings.HasPrefix(f, c+"/"):
					return "which holds " + h.path + ", " + h.what
				case strings.HasPrefix(c, f+"/") && h.path != "/root" && h.path != "/home":
					return "which lies in " + h.path + ", " + h.what
				}
			}
		}
	}
	return ""
}

// linkHops returns p, then each path it names on the way to its target,
// one symbolic link resolved at a time, and last its real path: every
// path the kernel goes through to open p, each of which has to be there
// inside the sandbox.
func linkHops(p string) []string {
	out := []string{p}
	for cur := p; len(out) < 40; {
		next, ok := firstLink(cur)
		if !ok || slices.Contains(out, next) {
			break
		}
		out = append(out, next)
		cur = next
	}
	if real, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, real) {
		out = append(out, real)
	}
	return out
}

// firstLink returns p with its first component that is a symbolic link
// (from the root down) replaced by the link's target, and whether there
// was one.
func firstLink(p string) (string, bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	prefix := "/"
	for i, part := range parts {
		c := filepath.Join(prefix, part)
		st, err := os.Lstat(c)
		if err != nil {
			return "", false
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(c)
			if err != nil {
				return "", false
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(prefix, target)
			}
			return filepath.Join(append([]string{target}, parts[i+1:]...)...), true
		}
		prefix = c
	}
	return "", false
}
