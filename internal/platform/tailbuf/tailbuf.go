// Package tailbuf keeps the end of what a child process writes: the part
// an error message quotes, bounded however much it writes.
package tailbuf

import (
	"strings"
	"sync"
)

// Buffer is an io.Writer that keeps the last Max bytes written to it. It is
// safe for concurrent use.
type Buffer struct {
	// Max is how many bytes are kept.
	Max int

	mu  sync.Mutex
	buf []byte
	cut bool
}

// Write implements io.Writer, dropping all but the last Max bytes.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.Max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.cut = true
	}
	return len(p), nil
}

// String returns the kept tail as valid UTF-8, marked "…" when cut.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut {
		return "…" + strings.ToValidUTF8(string(b.buf), "")
	}
	return strings.ToValidUTF8(string(b.buf), "")
}
