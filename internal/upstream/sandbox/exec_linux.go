//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// LandlockABI returns the Landlock ABI version the kernel supports, or 0
// with the reason when it has none (kernel too old, or Landlock not among
// the enabled security modules).
func LandlockABI() (int, error) {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("landlock: %w", err)
	}
	return v, nil
}

// execConfined applies p to the current process and executes argv.
func execConfined(p Policy, argv, env []string) error {
	// Capabilities are per thread: the one that drops them is the one
	// that executes the server.
	runtime.LockOSThread()
	if err := setLimits(p.Limits); err != nil {
		return err
	}
	if p.Limits.Processes > 0 {
		limitPIDs(p.Limits.Processes)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := restrict(p); err != nil {
		return err
	}
	// No descriptor but stdin, stdout and stderr reaches the server:
	// whatever bwrap or skillgate left open is closed on exec.
	if err := closeOnExec(); err != nil {
		return err
	}
	prog := argv[0]
	if path, err := exec.LookPath(prog); err == nil {
		prog = path
	}
	if err := syscall.Exec(prog, argv, env); err != nil {
		return fmt.Errorf("sandbox: exec %s: %w", argv[0], err)
	}
	return nil
}

// setLimits sets every bounded limit, soft and hard.
func setLimits(l Limits) error {
	for _, r := range []struct {
		name     string
		resource int
		value    int64
	}{
		{"address space", unix.RLIMIT_AS, l.AddressSpace},
		{"processes", unix.RLIMIT_NPROC, l.Processes},
		{"open files", unix.RLIMIT_NOFILE, l.OpenFiles},
		{"file size", unix.RLIMIT_FSIZE, l.FileSize},
		{"CPU time", unix.RLIMIT_CPU, l.CPUSeconds},
	} {
		if r.value <= 0 {
			continue
		}
		v := uint64(r.value)
		if err := unix.Setrlimit(r.resource, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("sandbox: setting the %s limit to %d: %w", r.name, v, err)
		}
	}
	return nil
}

// reservedPIDs is the kernel's RESERVED_PIDS: once a pid namespace's pids
// wrap around, they are allocated from here up.
const reservedPIDs = 300

// limitPIDs bounds the pids of the sandbox's pid namespace (Linux 6.14 and
// later, where pid_max is per namespace): RLIMIT_NPROC does not bind a
// process whose user is root outside its user namespace (skillgate run as
// root), and this does. At most n+reservedPIDs processes and threads run
// at once, and at least n once pids wrap. Where the kernel or the
// capabilities do not allow it, RLIMIT_NPROC alone bounds the server.
func limitPIDs(n int64) {
	_ = os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.FormatInt(n+reservedPIDs, 10)), 0)
}

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective capability sets of the calling thread: the server starts
// with none, even as root of its user namespace (bwrap leaves them to a
// sandbox started by root, for the helper to set pid_max). Dropping from
// the bounding set needs CAP_SETPCAP; without it (bwrap started by another
// user) there is nothing to drop.
func dropCapabilities() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EPERM && err != unix.EINVAL {
			return fmt.Errorf("sandbox: dropping capability %d: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: dropping capabilities: %w", err)
	}
	return nil
}

// restrict enforces p's Landlock ruleset on the current process (and so on
// the program it executes): reading and executing only under p.Read,
// writing only under p.Write, no TCP without p.Network, and (Landlock 6)
// no signals or abstract Unix sockets to processes outside the sandbox.
func restrict(p Policy) error {
	var rules []landlock.Rule
	for _, path := range p.Read {
		rules = append(rules, pathRule(path, false))
	}
	for _, path := range p.Write {
		rules = append(rules, pathRule(path, true))
	}
	// Landlock 7, the newest version skillgate is tested on; BestEffort
	// steps down on older kernels and does nothing without Landlock.
	cfg := landlock.V7.BestEffort()
	if !p.Network {
		if err := cfg.Restrict(rules...); err != nil {
			return fmt.Errorf("sandbox: landlock: %w", err)
		}
		return nil
	}
	if err := cfg.RestrictPaths(rules...); err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	if err := cfg.RestrictScoped(); err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	return nil
}

// pathRule grants read (and, when write is set, write) access under path:
// directory rights for a directory, file rights for anything else.
func pathRule(path string, write bool) landlock.Rule {
	st, err := os.Stat(path)
	dir := err != nil || st.IsDir()
	switch {
	case write && dir:
		return landlock.RWDirs(path).IgnoreIfMissing()
	case write:
		return landlock.RWFiles(path).IgnoreIfMissing()
	case dir:
		return landlock.RODirs(path).IgnoreIfMissing()
	}
	return landlock.ROFiles(path).IgnoreIfMissing()
}

// closeOnExec marks every descriptor above 2 close-on-exec:
// close_range(2) where the kernel has CLOSE_RANGE_CLOEXEC (Linux 5.11),
// each descriptor of /proc/self/fd otherwise.
func closeOnExec() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("sandbox: closing inherited descriptors: %w", err)
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return nil
}
