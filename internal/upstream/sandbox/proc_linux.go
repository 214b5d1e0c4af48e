//go:build linux

package sandbox

import (
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// setPdeathsig makes the kernel SIGKILL cmd's process (bwrap) when the
// thread that started it ends: with bwrap's own --die-with-parent, a
// confined server cannot outlive skillgate, even by a SIGKILL that gives
// skillgate no chance to stop it.
func setPdeathsig(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// argsFile returns a file, read from its start, that holds args separated
// by NUL bytes: what bwrap reads with --args. It is a memfd (no file
// system holds it), closed on exec in skillgate and passed to bwrap only
// as one of its ExtraFiles; bwrap closes it once read.
func argsFile(args []string) (*os.File, error) {
	fd, err := unix.MemfdCreate("skillgate-bwrap-args", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "skillgate-bwrap-args")
	var b []byte
	for _, a := range args {
		b = append(append(b, a...), 0)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
