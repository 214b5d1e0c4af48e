package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
	"github.com/skillgate/skillgate/internal/platform/pipe"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
	"github.com/skillgate/skillgate/internal/platform/tailbuf"
)

// stdioTransport is an mcp.Transport that runs a declared command. It is built
// on the SDK's IOTransport rather than CommandTransport because skillgate
// needs three things CommandTransport does not give: the whole process group
// is killed on close (an npx- or shell-launched server has children), the
// per-message size limit is configurable, and stderr is kept (bounded) for
// error messages while its pipe can never block the server.
type stdioTransport struct {
	command string
	args    []string
	env     []string
	dir     string
	limits  Limits
	fatal   *fatalRecorder
	confine Confiner // nil: the server runs unconfined

	mu   sync.Mutex
	proc *process
	conn *captureConn
}

// process is a started stdio server.
type process struct {
	cmd       *exec.Cmd
	exited    chan struct{} // closed once Wait returns
	state     *os.ProcessState
	waitErr   error
	stderr    *tailbuf.Buffer
	stderrEOF chan struct{}
	stderrR   *os.File
	stdin     *os.File // our end of the server's stdin
	stdout    *os.File // our end of the server's stdout
	terminate time.Duration

	// sawEOF is set when reading the server's stdout returned EOF: the
	// server closed its output (it exited or crashed) before skillgate
	// closed the pipe. Only then is an exit reported as the cause of an
	// error; an exit that follows skillgate's own close (SIGPIPE, a clean
	// exit on stdin EOF, the signals of shutdown) is a consequence.
	sawEOF atomic.Bool
}

// Connect implements mcp.Transport: it starts the process and returns a
// connection over its stdin and stdout.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	p, stdin, stdout, err := t.start()
	if err != nil {
		return nil, err
	}
	limited := &lineLimitReader{r: stdout, max: t.limits.MaxFrameBytes, fatal: t.fatal, what: "message",
		onEOF: func() { p.sawEOF.Store(true) }}
	// Raw calls (Conn.CallToolRaw) share the stream with the SDK's client:
	// their requests go through the same whole-message writer, and their
	// responses are taken off the stream before the SDK reads it.
	writer := jsonrpcline.NewWriter(stdin)
	calls := jsonrpcline.NewCalls(writer, "skillgate-")
	reader := jsonrpcline.NewReader(limited, t.limits.MaxFrameBytes, calls.Tap, func(err error) {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		calls.Fail(err)
	})
	inner, err := (&mcp.IOTransport{
		Reader: readCloser{reader, stdout},
		Writer: writeCloser{writer, stdin},
		// Our lineLimitReader enforces the limit per line and names the
		// cause. The SDK's own cap (it counts read-ahead too, so it is set
		// higher) stays as a second bound for a value spread over many
		// short lines.
		MaxLineLength: 2 * t.limits.MaxFrameBytes,
	}).Connect(ctx)
	if err != nil {
		_ = stdin.Close()
		_ = stdout.Close()
		p.shutdown()
		return nil, err
	}
	conn := &captureConn{inner: inner, calls: calls, onClose: func() error { p.shutdown(); return nil }}
	t.mu.Lock()
	t.proc, t.conn = p, conn
	t.mu.Unlock()
	return conn, nil
}

// start runs the command with its own pipes. The child's ends are *os.File,
// so exec starts no copying goroutines and Wait never blocks on a grandchild
// that keeps a pipe open.
func (t *stdioTransport) start() (p *process, stdin, stdout *os.File, err error) {
	cmd := exec.Command(t.command, t.args...)
	cmd.Env = t.env
	cmd.Dir = t.dir
	setProcessGroup(cmd)
	if t.confine != nil && cmd.Err == nil {
		if err := t.confine.Confine(cmd); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: cannot confine %s: %w", ErrServerStart, strictjson.Quote(t.command, 256), err)
		}
	}

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	newPipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w
	}
	inR, inW := newPipe()
	outR, outW := newPipe()
	errR, errW := newPipe()
	if err != nil {
		closeAll()
		return nil, nil, nil, fmt.Errorf("%w: creating pipes: %w", ErrServerStart, err)
	}
	// Results of tens of kilobytes pass in one write, not in 64 KiB turns.
	pipe.Grow(outR)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	startErr := cmd.Start()
	// The child holds its own copies now (or never started), of the
	// pipes and of what the confiner passes it (bwrap's options).
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()
	for _, f := range cmd.ExtraFiles {
		_ = f.Close()
	}
	if startErr != nil {
		_ = inW.Close()
		_ = outR.Close()
		_ = errR.Close()
		return nil, nil, nil, startError(t.command, startErr)
	}
	p = &process{
		cmd:       cmd,
		exited:    make(chan struct{}),
		stderr:    &tailbuf.Buffer{Max: t.limits.MaxStderrBytes},
		stderrEOF: make(chan struct{}),
		stderrR:   errR,
		stdin:     inW,
		stdout:    outR,
		terminate: t.limits.TerminateTimeout,
	}
	go func() {
		p.waitErr = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	go func() {
		_, _ = io.Copy(p.stderr, errR)
		close(p.stderrEOF)
	}()
	return p, inW, outR, nil
}

// startError words a failure to start command.
func startError(command string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("%w: command %s not found in PATH", ErrServerStart, strictjson.Quote(command, 256))
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: command %s does not exist", ErrServerStart, strictjson.Quote(command, 256))
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: command %s is not executable", ErrServerStart, strictjson.Quote(command, 256))
	}
	return fmt.Errorf("%w: command %s: %w", ErrServerStart, strictjson.Quote(command, 256), err)
}

// shutdown follows the MCP stdio shutdown order: stdin is already closed (by
// the connection), so wait for exit, then SIGTERM the process group, then
// SIGKILL it. Whatever happens, the group is killed at the end so that no
// grandchild survives. It returns once the server is reaped.
func (p *process) shutdown() {
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
			return false
		}
	}
	if !wait(p.terminate) {
		signalGroup(p.cmd, terminateSignal)
		if !wait(p.terminate) {
			signalGroup(p.cmd, killSignal)
			<-p.exited // SIGKILL cannot be ignored
		}
	}
	signalGroup(p.cmd, killSignal) // grandchildren that outlived the server
	_ = p.stderrR.Close()
	<-p.stderrEOF
}

// crashStatus reports whether the server went away on its own (it closed
// its stdout, see sawEOF) and exited within d, and how. An exit that
// skillgate caused is not a crash: the error that led to the close is the
// one to report then.
func (p *process) crashStatus(d time.Duration) (string, bool) {
	if !p.sawEOF.Load() {
		return "", false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		return "", false
	}
	if p.state != nil {
		return p.state.String(), true
	}
	if p.waitErr != nil {
		return p.waitErr.Error(), true
	}
	return "exited", true
}

// exitError builds the ErrServerExited error for an exited process, with the
// tail of its stderr.
func (p *process) exitError(status string) error {
	// Give the stderr copier a moment to drain what the process wrote last.
	t := time.NewTimer(100 * time.Millisecond)
	select {
	case <-p.stderrEOF:
	case <-t.C:
	}
	t.Stop()
	return &ExitError{Status: status, Stderr: strings.TrimSpace(p.stderr.String()), max: p.stderr.Max}
}

// abort closes the pipes to the process, so that a write blocked on a
// server that stopped reading fails at once. It does not signal the
// process; the connection's Close still shuts it down in order.
func (t *stdioTransport) abort() {
	t.mu.Lock()
	p := t.proc
	t.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.stdin.Close()
	_ = p.stdout.Close()
}

// kill sends SIGKILL to the process group at once: the last resort when a
// close does not finish in time.
func (t *stdioTransport) kill() {
	t.mu.Lock()
	p := t.proc
	t.mu.Unlock()
	if p != nil {
		signalGroup(p.cmd, killSignal)
	}
}

// current returns the process started by Connect, if any.
func (t *stdioTransport) current() (*process, *captureConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc, t.conn
}

// readCloser joins a reader with the closer of the file under it.
type readCloser struct {
	io.Reader
	io.Closer
}

// writeCloser joins a writer with the closer of the file under it.
type writeCloser struct {
	io.Writer
	io.Closer
}
