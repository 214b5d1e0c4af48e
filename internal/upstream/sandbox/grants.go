package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// ErrHiddenGrant means a path a server's declaration names would expose a
// hidden one (skillgate's data directory, a home directory, the system's
// password hashes or private keys) if it were bound in the sandbox: the
// path is, holds or lies in a hidden path. The server is not started; at
// install, the install is blocked.
var ErrHiddenGrant = errors.New("sandbox: a path of the declaration would expose a hidden one")

// Declaration is what of a server's declaration can grant it host paths.
type Declaration struct {
	// Args are the declared arguments, verbatim.
	Args []string
	// Env are the declared environment values by name, as mcp.json has
	// them: a credential reference (${NAME}) is never a path, whatever it
	// resolves to.
	Env map[string]string
	// Dir is the skill's tree, the server's working directory: bound
	// read-only anyway, never granted for writing.
	Dir string
}

// hiddenPath is a host path no confined server sees, with what it holds
// (said when a grant that would expose it is refused).
type hiddenPath struct {
	path, what string
	data       bool // skillgate's data directory, which --data moves
}

// hiddenPaths lists every hidden path of a sandbox that also hides hide:
// the home directories, the password files and private key directories,
// and hide (skillgate's data directory).
func hiddenPaths(hide []string) []hiddenPath {
	out := []hiddenPath{{"/root", "root's home directory", false}, {"/home", "the users' home directories", false}}
	for _, f := range hiddenFiles {
		out = append(out, hiddenPath{f, "the system's password hashes", false})
	}
	out = append(out, hiddenPath{"/etc/ssh", "the host's SSH keys", false}, hiddenPath{"/etc/ssl/private", "the host's TLS private keys", false})
	for _, h := range hide {
		if abs, err := filepath.Abs(h); err == nil && abs != "/" {
			out = append(out, hiddenPath{abs, "skillgate's data directory (its database, tokens.json, credentials.key)", true})
		}
	}
	return out
}

// Grants returns every host path that d grants a confined server, in the
// order of d (args, then env by name), each bound at its own path:
//
//   - each absolute path among the args that exists (a filesystem
//     server's allowed directory, a configuration file): read-write for a
//     directory that may be written (see below), read-only otherwise; for
//     a script inside a node_modules tree, that whole tree, read-only (the
//     script imports its dependencies from it);
//   - for each absolute path among the env values, the directory itself
//     or, for a file, the directory that holds it (a memory server's
//     MEMORY_FILE_PATH), read-write, when it may be written.
//
// A directory may be written unless it is at the top level (/tmp), under
// a system directory (/usr, /etc, /var, /opt, /run, …), in the skill's
// own tree or in a node_modules tree; an env path that may not be written
// is not granted at all.
//
// Every path that would be bound is checked against the hidden paths of a
// sandbox hiding hide (see [Bubblewrap.Hide]), symbolic links resolved on
// both sides: one that is, holds or lies in a hidden path is refused, and
// Grants fails with [ErrHiddenGrant], naming each such path, what it would
// expose and the fix. A path in the skill's tree (which is visible
// anyway) is exempt. The sandbox binds exactly what Grants returns, at
// install (every grant read-only) and at call time, and the review shows
// it: it is the one place that decides.
func Grants(d Declaration, hide []string) ([]capability.Grant, error) {
	hidden := hiddenPaths(hide)
	var out []capability.Grant
	var refused []string
	add := func(g capability.Grant) {
		if i := slices.IndexFunc(out, func(o capability.Grant) bool { return o.Path == g.Path }); i >= 0 {
			if g.Access == capability.GrantReadWrite {
				out[i].Access = g.Access
			}
			return
		}
		out = append(out, g)
	}
	// check refuses p (a path to bind, from what) when it touches a hidden
	// path, and reports whether it may be bound.
	check := func(p, real, from string) bool {
		if d.Dir != "" && (inside(p, d.Dir) && inside(real, d.Dir)) {
			return true
		}
		if why := exposes(p, real, hidden); why != "" {
			refused = append(refused, from+" "+p+" "+why)
			return false
		}
		return true
	}
	for i, a := range d.Args {
		if !filepath.IsAbs(a) || filepath.Clean(a) != a || a == "/" {
			continue
		}
		real, err := filepath.EvalSymlinks(a)
		if err != nil {
			continue // nothing there to bind
		}
		from := fmt.Sprintf("args[%d]", i)
		if nm := nodeModules(a); nm != "" {
			if realNM, err := filepath.EvalSymlinks(nm); err == nil && check(nm, realNM, from+" (its node_modules tree)") {
				add(capability.Grant{Path: nm, Access: capability.GrantReadOnly, From: from + " (its node_modules tree)"})
			}
		}
		if !check(a, real, from) {
			continue
		}
		access := capability.GrantReadOnly
		if st, err := os.Stat(real); err == nil && st.IsDir() && writable(a, real, d.Dir) {
			access = capability.GrantReadWrite
		}
		add(capability.Grant{Path: a, Access: access, From: from})
	}
	names := make([]string, 0, len(d.Env))
	for n := range d.Env {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := d.Env[n]
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			continue
		}
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
		case err == nil || errors.Is(err, os.ErrNotExist):
			p = filepath.Dir(p)
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				continue
			}
		default:
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !writable(p, real, d.Dir) {
			continue
		}
		if check(p, real, "env "+n) {
			add(capability.Grant{Path: p, Access: capability.GrantReadWrite, From: "env " + n})
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrHiddenGrant, strings.Join(refused, "; "))
	}
	return out, nil
}

// exposes says how binding p (which resolves to real) would expose a
// hidden path, with the fix, or "" when it would not. Both sides are
// compared as named and with their symbolic links resolved.
func exposes(p, real string, hidden []hiddenPath) string {
	within := func(a, dir string) bool { return strings.HasPrefix(a, dir+"/") }
	for _, h := range hidden {
		forms := []string{h.path}
		if r, err := filepath.EvalSymlinks(h.path); err == nil && r != h.path {
			forms = append(forms, r)
		}
		for _, rel := range []string{"is", "holds", "lies in"} {
			for _, c := range []string{p, real} {
				for _, f := range forms {
					switch {
					case rel == "is" && c == f:
						return fmt.Sprintf("is %s, %s: name a directory outside it", h.path, h.what)
					case rel == "holds" && within(f, c):
						fix := fmt.Sprintf("a subdirectory of %s beside it", c)
						if h.data {
							fix += ", or keep skillgate's data directory elsewhere with --data"
						}
						return fmt.Sprintf("holds %s, %s: name a directory that does not hold it (%s)", h.path, h.what, fix)
					case rel == "lies in" && within(c, f):
						return fmt.Sprintf("lies in %s, %s: name a directory outside it", h.path, h.what)
					}
				}
			}
		}
	}
	return ""
}

// writable reports whether the directory p (which resolves to real) may
// be granted for writing: not at the top level, under a protected
// directory, in the skill's tree dir or in a node_modules tree.
func writable(p, real, dir string) bool {
	for _, c := range []string{p, real} {
		if strings.Count(c, "/") < 2 || nodeModules(c+"/") != "" || under(c, protected) {
			return false
		}
		if dir != "" && under(c, []string{dir}) {
			return false
		}
	}
	return true
}

// inside reports whether p is dir or lies below it (both clean and
// absolute; dir's symbolic links resolved too).
func inside(p, dir string) bool {
	if dir == "/" {
		return true
	}
	if p == dir || strings.HasPrefix(p, dir+"/") {
		return true
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != dir {
		return p == r || strings.HasPrefix(p, r+"/")
	}
	return false
}

// protected are the directories under which nothing is granted for
// writing, whatever a declaration names: the system's and the home
// directories.
var protected = []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev", "/proc", "/sys", "/run", "/var", "/opt", "/snap", "/root", "/home"}

// under reports whether p is one of dirs or lies below one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if inside(p, abs) {
			return true
		}
	}
	return false
}
