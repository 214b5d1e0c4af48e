// Package jsonrpcline is JSON-RPC over a newline-delimited stream (MCP's
// stdio transport) handled as raw bytes: skillgate takes chosen messages
// off the stream and sends its own requests on it, while the SDK's
// connection handles the rest of the same stream.
//
// MCP's stdio transport is newline-delimited JSON-RPC. A gateway that only
// relays a tool call does not need the SDK to decode the request into typed
// structs, dispatch it on a handler goroutine, decode the upstream's result
// and encode it again: each of those steps costs latency, and re-encoding
// through typed structs can drop fields the SDK does not know. The three
// pieces here put a tap between the pipe and the SDK instead:
//
//   - [Reader] offers every complete line to a tap function before the SDK's
//     decoder sees it; a line the tap takes never reaches the SDK.
//   - [Writer] makes each write one whole message, so raw messages and the
//     SDK's own interleave only at message boundaries.
//   - [Calls] sends requests as raw bytes, with ids the SDK never uses, and
//     takes their responses off the stream (its Tap method is a tap).
//
// A tap runs on the goroutine that reads the stream. It must not block: it
// decides, writes and returns, and whatever waits for an answer waits in a
// callback.
//
// A line or result handed to a callback is the stream's buffer: it is valid
// only while the callback runs. Every layer above (mcpclient's raw calls,
// the broker, the gateway's relay) passes it on under the same rule.
package jsonrpcline

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// DefaultMaxLine is the longest line a [Reader] offers to its tap when no
// limit is given. Longer lines pass through to the SDK untouched (whose own
// limit then applies).
const DefaultMaxLine = 4 << 20

// Reader reads a newline-delimited stream and passes on every line its tap
// does not take. It is meant to be the Reader of an SDK IOTransport: the SDK
// reads it from one goroutine, so taps run on that goroutine, in stream
// order.
type Reader struct {
	br  *bufio.Reader
	max int
	tap func(line []byte) bool
	end func(error)

	out      []byte // the rest of a passed line, to hand out
	long     []byte // a line longer than the buffer, being assembled
	skipping bool   // passing the rest of an over-long line through
	err      error
}

// NewReader returns a Reader over r that offers each complete line (without
// its "\n" or "\r\n") to tap, up to max bytes (0 means [DefaultMaxLine]).
// When tap returns true the line is consumed; the slice is only valid during
// the call. end, if not nil, is called once with the error that ended the
// stream (io.EOF at a clean end).
func NewReader(r io.Reader, max int, tap func(line []byte) bool, end func(error)) *Reader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, readBuffer), max: max, tap: tap, end: end}
}

// readBuffer is a Reader's buffer: as large as the pipes skillgate grows
// (internal/platform/pipe), so that a result of tens of kilobytes, which reaches the
// pipe in one write, is read in one read and tapped where it lies, not
// assembled from pieces into a second buffer. The memory is only touched
// as far as messages fill it.
const readBuffer = 256 << 10

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.fill()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// fill reads the next line (or a piece of an over-long one) into r.out,
// unless the tap takes it.
func (r *Reader) fill() {
	chunk, err := r.br.ReadSlice('\n')
	switch {
	case r.skipping:
		r.out = chunk
		if err == nil {
			r.skipping = false
		}
	case errors.Is(err, bufio.ErrBufferFull):
		r.long = append(r.long, chunk...)
		if len(r.long) > r.max { // too long to tap: let it through as it is
			r.out, r.long, r.skipping = r.long, nil, true
		}
		return
	case err == nil:
		line := chunk
		if len(r.long) > 0 {
			r.long = append(r.long, chunk...)
			line = r.long
		}
		// len(line)-1, not r.max+1: a max of math.MaxInt must not overflow.
		if len(line)-1 <= r.max && r.tap != nil && r.tap(trimEOL(line)) {
			if cap(r.long) > 1<<20 { // do not keep the largest line ever seen
				r.long = nil
			} else {
				r.long = r.long[:0]
			}
			return
		}
		// A line in the reader's buffer stays valid until the next
		// ReadSlice, which happens only once it has been handed out; an
		// assembled long line is handed over with its buffer.
		if len(r.long) > 0 {
			r.long = nil
		}
		r.out = line
		return
	default: // the stream ended; a last line without "\n" is passed on
		r.out = append(r.long, chunk...)
		r.long = nil
	}
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		r.err = err
		if r.end != nil {
			r.end(err)
		}
	}
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// maxVector bounds the parts of a message written with writev(2), the
// newline included; messages of more parts are copied into one buffer.
const maxVector = 8

var newline = []byte{'\n'}

// keepBuffer is the largest message buffer a [Writer] keeps for the next
// message: results of tens of kilobytes (a file's text) are common, and
// allocating (and clearing) such a buffer for each costs more than the copy.
const keepBuffer = 256 << 10

// Writer serialises writes so that each one is a whole message: the SDK's
// stdio connection writes a message and its newline in one Write, and
// [Writer.WriteLine] does the same for raw messages.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer; p is written whole before any other message.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// WriteLine writes the concatenation of parts and a newline as one message.
// The parts must make one JSON value without a newline in it.
func (w *Writer) WriteLine(parts ...[]byte) error { return w.writeLineIf(nil, parts...) }

// writeLineIf is WriteLine, except that when ok is not nil it is called
// under the writer's lock, once every earlier message is written, and
// nothing is written when it returns false.
func (w *Writer) writeLineIf(ok func() bool, parts ...[]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok != nil && !ok() {
		return nil
	}
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	if n >= vectorMin && len(parts) < maxVector {
		var vec [maxVector][]byte
		v := append(append(vec[:0], parts...), newline)
		if done, err := writeVectored(w.w, v); done {
			return err
		}
	}
	b := w.buf[:0]
	if cap(b) < n {
		b = make([]byte, 0, n) // one allocation, not one per doubling
	}
	for _, p := range parts {
		b = append(b, p...)
	}
	b = append(b, '\n')
	_, err := w.w.Write(b)
	if cap(b) <= keepBuffer { // keep a buffer for results of this size, not the largest ever seen
		w.buf = b[:0]
	} else {
		w.buf = nil
	}
	return err
}
