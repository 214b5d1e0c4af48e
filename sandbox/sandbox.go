// Package sandbox confines the processes skillgate starts for servers it
// does not trust: the MCP servers that a third-party skill declares, which
// an install starts to read their tool lists before any human has approved
// them. On Linux it uses bubblewrap (bwrap): the server sees the host's file
// system read-only, without home directories or the directories skillgate
// hides (its data directory), a private /tmp, no network unless allowed, its
// own process tree that dies with skillgate, and a bound on its address
// space.
package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrUnavailable means the sandbox cannot run here (bwrap or prlimit is not
// installed); the error says how to install it.
var ErrUnavailable = errors.New("sandbox unavailable")

// DefaultMemoryBytes bounds a confined server's address space (RLIMIT_AS):
// enough for a Node.js or Python server, which reserve large virtual ranges,
// and far from what a runaway process could take of a small machine.
const DefaultMemoryBytes = 4 << 30

// Bubblewrap confines commands with bwrap (and prlimit, from util-linux,
// for the memory bound). The zero value hides the usual home directories,
// denies the network and bounds memory to DefaultMemoryBytes.
type Bubblewrap struct {
	// Network lets the server reach the network (it shares the host's
	// network namespace); otherwise it has only a loopback of its own.
	Network bool
	// Hide are directories replaced by an empty, private tmpfs, such as
	// skillgate's data directory. /root and /home are always hidden.
	Hide []string
	// MemoryBytes bounds the address space; 0 means DefaultMemoryBytes,
	// negative means no bound.
	MemoryBytes int64
	// LookPath finds bwrap and prlimit; nil means exec.LookPath.
	LookPath func(string) (string, error)
}

// Confine rewrites cmd, not yet started, to run its program under the
// sandbox: same arguments, environment and working directory (which stays
// readable but, like everything else, not writable). cmd.Path must be the
// program's resolved path, as exec.Command sets it.
func (b Bubblewrap) Confine(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	look := b.LookPath
	if look == nil {
		look = exec.LookPath
	}
	bwrap, err := look("bwrap")
	if err != nil {
		return fmt.Errorf("%w: bwrap not found (install bubblewrap: apt-get install bubblewrap)", ErrUnavailable)
	}
	args := b.Args(cmd.Path, cmd.Dir, cmd.Args[1:]...)
	path := bwrap
	args = append([]string{bwrap}, args...)
	if mem := b.memory(); mem > 0 {
		prlimit, err := look("prlimit")
		if err != nil {
			return fmt.Errorf("%w: prlimit not found (install util-linux)", ErrUnavailable)
		}
		path = prlimit
		args = append([]string{prlimit, "--as=" + strconv.FormatInt(mem, 10), "--"}, args...)
	}
	cmd.Path, cmd.Args = path, args
	return nil
}

func (b Bubblewrap) memory() int64 {
	switch {
	case b.MemoryBytes == 0:
		return DefaultMemoryBytes
	case b.MemoryBytes < 0:
		return 0
	}
	return b.MemoryBytes
}

// Args returns bwrap's arguments that run program with args in dir: what
// Confine runs, for showing an operator.
//
// An argument that is the absolute path of an existing file or directory
// (a filesystem server's allowed directory, a configuration file) stays
// visible, read-only, even where it lies in the private /tmp, unless it lies
// in a home directory or a hidden one: what a server is openly configured
// with must be there for it to start. For a script inside a node_modules
// tree (an npm server run as node DIR/node_modules/PKG/dist/index.js), that
// whole node_modules tree stays visible, read-only, on the same terms: the
// script imports its dependencies from it.
func (b Bubblewrap) Args(program, dir string, args ...string) []string {
	out := b.sandboxArgs(program, dir, args)
	out = append(out, "--", program)
	return append(out, args...)
}

func (b Bubblewrap) sandboxArgs(program, dir string, progArgs []string) []string {
	args := []string{
		"--die-with-parent", // killed with skillgate
		"--unshare-all",     // own pid, ipc, uts, cgroup and (below) network namespaces
	}
	if b.Network {
		args = append(args, "--share-net")
	}
	args = append(args,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--tmpfs", "/root",
		"--tmpfs", "/home",
	)
	for _, h := range b.Hide {
		if abs, err := filepath.Abs(h); err == nil {
			args = append(args, "--tmpfs", abs)
		}
	}
	for _, a := range progArgs {
		real, ok := b.exposable(a)
		if !ok {
			continue
		}
		// A script inside a node_modules tree resolves its packages from
		// that tree: the whole tree stays visible with it.
		if nm := nodeModules(a); nm != "" {
			if realNM, ok := b.exposable(nm); ok {
				args = append(args, "--ro-bind", realNM, nm)
			}
		}
		args = append(args, "--ro-bind", real, a)
	}
	if filepath.IsAbs(program) {
		// The program itself stays visible (read-only) even when it lies
		// in a hidden directory such as /tmp.
		args = append(args, "--ro-bind", program, program)
	}
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			// The working directory stays visible (read-only) even when
			// it lies in a hidden one, as an installed skill's tree lies
			// in the data directory.
			args = append(args, "--ro-bind", abs, abs, "--chdir", abs)
		}
	}
	return args
}

// nodeModules returns the outermost node_modules directory that holds
// path, or "" when there is none.
func nodeModules(path string) string {
	const seg = "/node_modules/"
	i := strings.Index(path, seg)
	if i < 0 {
		return ""
	}
	return path[:i+len(seg)-1]
}

// exposable reports whether a program argument names an existing path that
// may stay visible in the sandbox, and the path it resolves to: neither may
// lie in a home directory or a hidden one (a link in /tmp to ~/.ssh is not
// followed there).
func (b Bubblewrap) exposable(a string) (string, bool) {
	if !filepath.IsAbs(a) || filepath.Clean(a) != a || a == "/" {
		return "", false
	}
	real, err := filepath.EvalSymlinks(a)
	if err != nil {
		return "", false
	}
	for _, h := range append([]string{"/root", "/home"}, b.Hide...) {
		abs, err := filepath.Abs(h)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		for _, p := range []string{a, real} {
			if p == abs || strings.HasPrefix(p, abs+"/") {
				return "", false
			}
		}
	}
	return real, true
}
