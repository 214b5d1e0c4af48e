//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockConfig is the newest Landlock version skillgate asks for: it
// was tested on that version; BestEffort steps down on older kernels.
var landlockConfig = landlock.V7

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
	if err := setLimits(p.Limits); err != nil {
		return err
	}
	if err := restrict(p); err != nil {
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
	cfg := landlockConfig.BestEffort()
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
