// Package sandbox confines the processes skillgate starts for servers it
// does not trust: the MCP servers that a third-party skill declares, both
// when an install starts them to read their tool lists before any human
// has approved them and when an approved skill's capability is called. On
// Linux it uses bubblewrap (bwrap): the server runs in its own user, pid,
// ipc, uts, cgroup and network namespaces with no capabilities, sees the
// host's file system read-only, without home directories or the
// directories skillgate hides (its data directory), a private /tmp, no
// network unless allowed, and its own process tree that dies with
// skillgate. At run time ([Runtime]) a helper inside the sandbox (skillgate
// itself, see [HelperCommand]) adds resource limits and a Landlock ruleset
// before it executes the server, and the server gets one private writable
// state directory per skill version. See docs/sandbox.md.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// ErrUnavailable means the sandbox cannot run here (bwrap or prlimit is not
// installed); the error says how to install it.
var ErrUnavailable = errors.New("sandbox unavailable")

// DefaultMemoryBytes bounds a confined server's address space (RLIMIT_AS):
// enough for a Node.js or Python server, which reserve large virtual ranges,
// and far from what a runaway process could take of a small machine.
const DefaultMemoryBytes = 4 << 30

// Bubblewrap confines commands with bwrap (and, without a Helper, prlimit
// from util-linux for the memory bound). The zero value hides the usual
// home directories, denies the network and bounds memory to
// DefaultMemoryBytes.
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
	// State is the server's private writable directory, bound read-write
	// at its own path; HOME points to it. Empty means none (and HOME is
	// left as the environment has it).
	State string
	// Grants are what the approved declaration grants the server at call
	// time, as [Grants] computes them ([Runtime] sets them), each bound at
	// its own path with its access. Nil (introspection before approval)
	// binds what [Grants] computes from the command's arguments alone,
	// every path read-only.
	Grants []capability.Grant
	// Helper is the command run inside the sandbox that applies Limits
	// and a Landlock ruleset and then executes the server (skillgate
	// sandbox-exec, see [HelperCommand]). Its program must be an absolute
	// path; it is bound read-only. Empty means no helper: memory is bound
	// with prlimit and MemoryBytes, and nothing else is limited.
	Helper []string
	// Limits bound the server's resources when Helper is set; zero
	// fields take their defaults.
	Limits Limits
	// Binds are absolute paths (directories or files) that skillgate
	// itself, never a declaration, shows the server read-only at their own
	// path, even where they lie in a hidden directory: a package tree
	// skillgate fetched into its data directory, an interpreter's
	// installation under a home directory. Each is bound with its
	// symbolic links resolved, after the hiding mounts, and the helper's
	// Landlock ruleset lets the server read it. Confine fails when one
	// does not exist, or is or holds a hidden path (which binding it would
	// uncover).
	Binds []string
	// TmpSize bounds the private /tmp in bytes (bwrap --size, which
	// bubblewrap 0.7 and later have); 0 leaves it unbounded.
	TmpSize int64
	// SameSession keeps the server in skillgate's session instead of a
	// new one (bwrap --new-session). A new session is what keeps a
	// server from pushing input into skillgate's terminal (TIOCSTI), so
	// only set it where that cannot happen: see [SessionNeeded].
	SameSession bool
}

// hiddenFiles are host files a confined server never reads, even where it
// runs as the owner of root's files (skillgate run as root): each is
// replaced by an empty one when it exists.
var hiddenFiles = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd"}

// hiddenDirs are host directories replaced by an empty one for the same
// reason: private keys.
var hiddenDirs = []string{"/etc/ssh", "/etc/ssl/private"}

// systemDirs are read (and executed) by any server: what an interpreter
// and its libraries need. Landlock allows reading nothing else but the
// skill's tree, the program and what its arguments name.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys"}

// Confine rewrites cmd, not yet started, to run its program under the
// sandbox: same arguments, environment and working directory (which stays
// readable but, like everything else, not writable), except that with a
// State directory HOME is that directory and TMPDIR the private /tmp. On
// Linux the kernel SIGKILLs bwrap when the thread that started it ends
// (Pdeathsig), besides bwrap's own --die-with-parent. cmd.Path must be the
// program's resolved path, as exec.Command sets it. bwrap's options are
// passed in a file that Confine puts first in cmd.ExtraFiles: the caller
// closes cmd.ExtraFiles once the command has started (exec.Cmd does not).
// It fails with [ErrUnavailable] when bwrap (or, without a Helper,
// prlimit) is missing, with [ErrHiddenGrant] when a path of the
// command's arguments (or of [Bubblewrap.Grants]) would expose a hidden
// one, and with [ErrHiddenInterpreter] when the program or an interpreter
// that runs it is installed under a hidden directory where it cannot be
// bound back (see [Interpreters]); those it can, it binds read-only, as it
// does [Bubblewrap.Binds].
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
	grants := b.Grants
	if grants == nil {
		if grants, err = Grants(Declaration{Args: cmd.Args[1:], Dir: cmd.Dir}, b.Hide); err != nil {
			return err
		}
		for i := range grants {
			grants[i].Access = capability.GrantReadOnly
		}
	}
	binds, err := b.binds(cmd)
	if err != nil {
		return err
	}
	opts, tail := b.args(cmd.Path, cmd.Dir, cmd.Args[1:], grants, binds)
	// bwrap's options, which name host paths (the data directory hidden,
	// the grants) and set the helper's policy, reach it through a file
	// descriptor (--args), not its command line: a confined server can
	// read its sandbox's pid 1's /proc/1/cmdline. What stays there is the
	// command the server runs as (its own argv, which it sees anyway).
	optsFile, err := argsFile(opts)
	if err != nil {
		return fmt.Errorf("sandbox: passing bwrap its options: %w", err)
	}
	cmd.ExtraFiles = append([]*os.File{optsFile}, cmd.ExtraFiles...)
	fd := strconv.Itoa(3) // ExtraFiles[0] is the child's descriptor 3
	path := bwrap
	args := append([]string{bwrap, "--args", fd, "--"}, tail...)
	if b.State != "" {
		cmd.Env = setEnv(cmd.Env, "HOME", b.State)
		cmd.Env = setEnv(cmd.Env, "TMPDIR", "/tmp")
	}
	setPdeathsig(cmd)
	if mem := b.memory(); mem > 0 && len(b.Helper) == 0 {
		prlimit, err := look("prlimit")
		if err != nil {
			optsFile.Close()
			return fmt.Errorf("%w: prlimit not found (install util-linux)", ErrUnavailable)
		}
		path = prlimit
		args = append([]string{prlimit, "--as=" + strconv.FormatInt(mem, 10), "--"}, args...)
	}
	cmd.Path, cmd.Args = path, args
	return nil
}

// binds returns what Confine binds read-only for skillgate itself:
// [Bubblewrap.Binds], checked, then the installation directories that
// [Interpreters] finds cmd's program and interpreters need (those that
// lie in its working directory or in a Bind, which are shown anyway,
// need nothing).
func (b Bubblewrap) binds(cmd *exec.Cmd) ([]string, error) {
	hidden := hiddenPaths(b.Hide)
	var out, visible []string
	for _, p := range b.Binds {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: the bind %q is not an absolute path", p)
		}
		p = filepath.Clean(p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("sandbox: the bind %s does not exist", p)
			}
			return nil, fmt.Errorf("sandbox: the bind %s: %w", p, err)
		}
		for _, h := range hidden {
			hforms := []string{h.path}
			if r, err := filepath.EvalSymlinks(h.path); err == nil && r != h.path {
				hforms = append(hforms, r)
			}
			for _, c := range []string{p, real} {
				for _, f := range hforms {
					if inside(f, c) {
						return nil, fmt.Errorf("sandbox: the bind %s would uncover %s, %s", p, h.path, h.what)
					}
				}
			}
		}
		out = append(out, p)
		visible = append(visible, p)
	}
	if cmd.Dir != "" {
		if abs, err := filepath.Abs(cmd.Dir); err == nil {
			visible = append(visible, abs)
		}
	}
	program := cmd.Path
	if !filepath.IsAbs(program) {
		// exec.Cmd runs a relative path from the working directory.
		var err error
		if program, err = filepath.Abs(filepath.Join(cmd.Dir, program)); err != nil {
			return out, nil
		}
	}
	if _, err := os.Stat(program); errors.Is(err, os.ErrNotExist) {
		// Nothing to bind: the start fails as it would unconfined.
		return out, nil
	}
	grants, err := interpreters(program, cmd.Env, b.Hide, visible)
	if err != nil {
		return nil, err
	}
	for _, g := range grants {
		if !slices.Contains(out, g.Path) {
			out = append(out, g.Path)
		}
	}
	return out, nil
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

// setEnv returns env with name set to value, replacing every earlier
// setting of it.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// args returns bwrap's options that run program with args in dir, the
// paths of grants bound with their access, and the command that follows
// them (after "--"): the helper, when there is one, then program and
// args. The helper's policy is among the options (bwrap sets it in the
// helper's environment, see [PolicyEnv]), not on its command line.
//
// The working directory, the program and binds stay visible, read-only,
// even where they lie in a hidden directory (an installed skill's tree
// lies in the data directory; a program may lie in the private /tmp).
func (b Bubblewrap) args(program, dir string, args []string, grants []capability.Grant, binds []string) (opts, command []string) {
	opts, read := b.sandboxArgs(program, dir, grants, binds)
	if len(b.Helper) > 0 {
		p := Policy{Limits: b.Limits.WithDefaults(), Read: read, Write: b.writable(grants), Network: b.Network}
		opts = append(opts, "--setenv", PolicyEnv, p.encode())
		command = append(command, b.Helper...)
		command = append(command, "--")
	}
	command = append(command, program)
	return opts, append(command, args...)
}

// writable lists what a confined server may write: its private /tmp and
// devices, its state directory and its read-write grants.
func (b Bubblewrap) writable(grants []capability.Grant) []string {
	w := []string{"/tmp", "/dev"}
	if b.State != "" {
		w = append(w, b.State)
	}
	for _, g := range grants {
		if g.Access == capability.GrantReadWrite {
			w = append(w, g.Path)
		}
	}
	return w
}

// sandboxArgs returns bwrap's options, and the paths the server may read
// (the system directories, its tree, its program, its grants and binds).
func (b Bubblewrap) sandboxArgs(program, dir string, grants []capability.Grant, binds []string) (args, read []string) {
	args = []string{
		"--die-with-parent", // killed with skillgate
		"--unshare-all",     // own pid, ipc, uts, cgroup and (below) network namespaces
		// A user namespace even where bwrap would skip it (skillgate run
		// as root): as root, a sandbox without one would keep every
		// capability of the host.
		"--unshare-user",
	}
	if !b.SameSession {
		args = append(args, "--new-session") // no TIOCSTI into skillgate's terminal
	}
	if len(b.Helper) == 0 || os.Geteuid() != 0 {
		// No capabilities in the namespace. Started by root, the helper
		// keeps them a moment, to bound the namespace's pids, and drops
		// them all before the server starts.
		args = append(args, "--cap-drop", "ALL")
	}
	if b.Network {
		args = append(args, "--share-net")
	}
	args = append(args,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
	)
	if b.TmpSize > 0 {
		args = append(args, "--size", strconv.FormatInt(b.TmpSize, 10))
	}
	args = append(args,
		"--tmpfs", "/tmp",
		"--tmpfs", "/root",
		"--tmpfs", "/home",
	)
	read = append(read, systemDirs...)
	for _, f := range hiddenFiles {
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
			args = append(args, "--ro-bind", "/dev/null", f)
		}
	}
	for _, d := range hiddenDirs {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			args = append(args, "--tmpfs", d)
		}
	}
	for _, h := range b.Hide {
		if abs, err := filepath.Abs(h); err == nil {
			args = append(args, "--tmpfs", abs)
		}
	}
	// Binds (skillgate's own, and interpreters' installations) lie in
	// hidden paths, on purpose, but never are or hold one: bound after
	// the hiding mounts, they uncover only themselves.
	for _, p := range binds {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			args = append(args, "--ro-bind", real, p)
			read = append(read, p)
		}
	}
	// Grants never are, hold or lie in a hidden path (Grants refuses
	// them), so binding them after the hiding mounts uncovers nothing.
	for _, g := range grants {
		if g.Access != capability.GrantReadOnly {
			continue
		}
		if real, err := filepath.EvalSymlinks(g.Path); err == nil {
			args = append(args, "--ro-bind", real, g.Path)
			read = append(read, g.Path)
		}
	}
	if filepath.IsAbs(program) {
		// The program itself stays visible (read-only) even when it lies
		// in a hidden directory such as /tmp.
		args = append(args, "--ro-bind", program, program)
		read = append(read, program)
	}
	if len(b.Helper) > 0 && filepath.IsAbs(b.Helper[0]) {
		args = append(args, "--ro-bind", b.Helper[0], b.Helper[0])
	}
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			// The working directory stays visible (read-only) even when
			// it lies in a hidden one, as an installed skill's tree lies
			// in the data directory.
			args = append(args, "--ro-bind", abs, abs)
			read = append(read, abs)
		}
	}
	// What the server may write comes last, so that it wins over a
	// read-only or hidden directory above it.
	for _, g := range grants {
		if g.Access == capability.GrantReadWrite {
			args = append(args, "--bind", g.Path, g.Path)
		}
	}
	if b.State != "" {
		args = append(args, "--bind", b.State, b.State)
	}
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			args = append(args, "--chdir", abs)
		}
	}
	return args, read
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
