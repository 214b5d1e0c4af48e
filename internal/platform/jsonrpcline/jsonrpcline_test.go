package jsonrpcline_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
)

// bufSize is the size of the Reader's internal buffer: lines longer than it
// are assembled (when they may be tapped) or passed on in pieces.
const bufSize = 64 << 10

// model is the reference behaviour of a Reader with limit max whose tap takes
// a line when take says so. It returns what the Reader must pass on and the
// lines the tap must be offered, in order.
//
// A complete line is offered without its "\n" or "\r\n" when its bytes
// before the "\n" (a "\r" among them) number at most max; when the tap takes
// it, the line and its terminator are removed from the stream. A longer line
// is passed on intact and never offered, whatever it starts with. A last
// line without "\n" is passed on and never offered.
func model(in []byte, max int, take func([]byte) bool) (out []byte, offered []string) {
	out = []byte{}
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			out = append(out, in...)
			break
		}
		line := in[:i+1]
		in = in[i+1:]
		if i <= max {
			l := bytes.TrimSuffix(line[:i], []byte("\r"))
			offered = append(offered, string(l))
			if take(l) {
				continue
			}
		}
		out = append(out, line...)
	}
	return out, offered
}

func hashLine(l []byte) bool  { return len(l) > 0 && l[0] == '#' }
func emptyLine(l []byte) bool { return len(l) == 0 }
func noLine([]byte) bool      { return false }

// readAll reads r with a buffer of n bytes until an error, and returns what
// it read and that error. A Read returning 0 bytes and no error, or more
// bytes than asked for, is an error of its own.
func readAll(r io.Reader, n int) ([]byte, error) {
	out := []byte{}
	p := make([]byte, n)
	for {
		k, err := r.Read(p)
		if k < 0 || k > n {
			return out, fmt.Errorf("Read returned %d for a %d-byte buffer", k, n)
		}
		out = append(out, p[:k]...)
		if err != nil {
			return out, err
		}
		if k == 0 {
			return out, errors.New("Read returned 0, nil")
		}
	}
}

// tapped records what a Reader offers its tap and how its end callback is
// called.
type tapped struct {
	take    func([]byte) bool
	offered []string
	ends    []error
}

func (t *tapped) tap(line []byte) bool {
	t.offered = append(t.offered, string(line)) // the slice is only valid during the call
	return t.take(line)
}

func (t *tapped) end(err error) { t.ends = append(t.ends, err) }

// short describes a possibly huge string in a failure message.
func short(s string) string {
	if len(s) <= 80 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...%q (%d bytes)", s[:40], s[len(s)-20:], len(s))
}

func shortAll(ss []string) string {
	var b strings.Builder
	b.WriteString("[")
	for i, s := range ss {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(short(s))
	}
	b.WriteString("]")
	return b.String()
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sources wrap the input of a Reader so that it arrives in different ways.
var sources = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one-byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data-err", iotest.DataErrReader},
}

// readSizes are the sizes of the buffers the Reader is read with.
var readSizes = []int{1, 3, 64, 128 << 10}

func TestReader(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	long100k := "#" + x(100<<10)
	long200k := "a" + x(200<<10)
	exact := "#" + x(bufSize-1)     // bufSize bytes before "\n": tapped with max bufSize
	overExact := "#" + x(bufSize)   // one more: passed
	fills := "#" + x(bufSize-1)     // with max 100: fills the buffer, its "\n" starts the next
	justFits := "#" + x(bufSize-2)  // with its "\n", exactly fills the buffer
	huge := "#" + x(3*bufSize+5)    // over-long with max 100 and 70000
	tailless := "#" + x(150<<10)    // over-long, at EOF without "\n"
	assembled := "#" + x(70000-1)   // 70000 bytes: tapped with max 70000
	assembled1 := "#" + x(70000)    // 70001 bytes: passed with max 70000
	assembledCR := "#" + x(70000-2) // 69999 bytes and a "\r": tapped with max 70000

	tests := []struct {
		name        string
		in          string
		max         int
		take        func([]byte) bool // hashLine when nil
		want        string
		wantOffered []string
	}{
		{name: "empty input", in: "", want: ""},
		{name: "nothing taken", in: "a\nb\n", want: "a\nb\n", wantOffered: []string{"a", "b"}},
		{name: "taken lines removed with their newline", in: "#1\na\n#2\nb\n#3\n", want: "a\nb\n", wantOffered: []string{"#1", "a", "#2", "b", "#3"}},
		{name: "all taken", in: "#1\n#2\n", want: "", wantOffered: []string{"#1", "#2"}},
		{name: "json lines", in: `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `#{"id":"t-1"}` + "\n", want: `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", wantOffered: []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `#{"id":"t-1"}`}},
		{name: "CRLF lines", in: "#1\r\na\r\n#2\r\nb\r\n", want: "a\r\nb\r\n", wantOffered: []string{"#1", "a", "#2", "b"}},
		{name: "LF and CRLF mixed", in: "a\r\n#b\n#c\r\nd\n", want: "a\r\nd\n", wantOffered: []string{"a", "#b", "#c", "d"}},
		{name: "lone CR inside a line is kept", in: "#a\rb\nc\rd\n", want: "c\rd\n", wantOffered: []string{"#a\rb", "c\rd"}},
		{name: "only one CR is trimmed", in: "#x\r\r\ny\r\r\n", want: "y\r\r\n", wantOffered: []string{"#x\r", "y\r"}},
		{name: "CR at line start", in: "\r#x\n", want: "\r#x\n", wantOffered: []string{"\r#x"}},
		{name: "empty lines passed", in: "\n\n\r\n", want: "\n\n\r\n", wantOffered: []string{"", "", ""}},
		{name: "empty lines taken", in: "\n#a\n\r\n\n", take: emptyLine, want: "#a\n", wantOffered: []string{"", "#a", "", ""}},
		{name: "last line without newline is passed, not offered", in: "#1\n#2", want: "#2", wantOffered: []string{"#1"}},
		{name: "only a line without newline", in: "#x", want: "#x"},
		{name: "last line ends in CR", in: "#1\r", want: "#1\r"},
		{name: "NUL and non-UTF-8 bytes", in: "#\x00\xff\n\x00\xfe\n", want: "\x00\xfe\n", wantOffered: []string{"#\x00\xff", "\x00\xfe"}},
		{name: "max counts bytes before the newline", in: "#2345\n#23456\nabcde\n", max: 5, want: "#23456\nabcde\n", wantOffered: []string{"#2345", "abcde"}},
		{name: "max counts the CR of CRLF", in: "#234\r\n#2345\r\n", max: 5, want: "#2345\r\n", wantOffered: []string{"#234"}},
		{name: "over-long line passes though it starts with #", in: "#234567890\n#1\nx\n", max: 5, want: "#234567890\nx\n", wantOffered: []string{"#1", "x"}},
		{name: "max 1", in: "#\n#1\n\n", max: 1, want: "#1\n\n", wantOffered: []string{"#", ""}},
		{name: "negative max means the default", in: "#" + x(1000) + "\na\n", max: -1, want: "a\n", wantOffered: []string{"#" + x(1000), "a"}},
		{name: "max math.MaxInt", in: "#1\na\n", max: math.MaxInt, want: "a\n", wantOffered: []string{"#1", "a"}},
		{name: "line longer than the buffer is tapped", in: long100k + "\ny\n#z\n", want: "y\n", wantOffered: []string{long100k, "y", "#z"}},
		{name: "CRLF line longer than the buffer is tapped", in: long100k + "\r\n#z\r\ny\r\n", want: "y\r\n", wantOffered: []string{long100k, "#z", "y"}},
		{name: "line longer than the buffer not taken passes intact", in: long200k + "\n#1\nb\n", want: long200k + "\nb\n", wantOffered: []string{long200k, "#1", "b"}},
		{name: "max equal to the buffer size", in: exact + "\n" + overExact + "\n#z\n", max: bufSize, want: overExact + "\n", wantOffered: []string{exact, "#z"}},
		{name: "assembled line at max", in: assembled + "\n" + assembled1 + "\n" + assembledCR + "\r\n#z\n", max: 70000, want: assembled1 + "\n", wantOffered: []string{assembled, assembledCR, "#z"}},
		{name: "over-long line across many buffers", in: huge + "\n#1\n" + huge + "\r\nk\n", max: 70000, want: huge + "\n" + huge + "\r\nk\n", wantOffered: []string{"#1", "k"}},
		{name: "over-long line with a small max", in: "#0\n" + huge + "\n#1\nk\n", max: 100, want: huge + "\nk\n", wantOffered: []string{"#0", "#1", "k"}},
		{name: "over-long line whose newline starts the next buffer", in: fills + "\n#1\n", max: 100, want: fills + "\n", wantOffered: []string{"#1"}},
		{name: "over-long line exactly filling the buffer", in: justFits + "\n#1\n", max: 100, want: justFits + "\n", wantOffered: []string{"#1"}},
		{name: "over-long line at EOF without newline", in: "#1\n" + tailless, max: 100, want: tailless, wantOffered: []string{"#1"}},
		{name: "assembled line at EOF without newline", in: "#1\n" + long100k, want: long100k, wantOffered: []string{"#1"}},
		{name: "many short lines", in: strings.Repeat("#a\nb\r\n", 30000), want: strings.Repeat("b\r\n", 30000), wantOffered: func() []string {
			var o []string
			for range 30000 {
				o = append(o, "#a", "b")
			}
			return o
		}()},
	}
	for _, tt := range tests {
		take := tt.take
		if take == nil {
			take = hashLine
		}
		max := tt.max
		if max <= 0 {
			max = jsonrpcline.DefaultMaxLine
		}
		// The reference agrees with the expectations written out here, so
		// that the fuzz target can rely on it.
		if out, offered := model([]byte(tt.in), max, take); string(out) != tt.want || !equalStrings(offered, tt.wantOffered) {
			t.Fatalf("%s: model gives %s, offers %s", tt.name, short(string(out)), shortAll(offered))
		}
		for _, src := range sources {
			for _, n := range readSizes {
				if n == 1 && len(tt.in) > 1<<20 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%d", tt.name, src.name, n), func(t *testing.T) {
					tp := &tapped{take: take}
					r := jsonrpcline.NewReader(src.wrap(strings.NewReader(tt.in)), tt.max, tp.tap, tp.end)
					out, err := readAll(r, n)
					if err != io.EOF {
						t.Fatalf("read error %v, want io.EOF", err)
					}
					if string(out) != tt.want {
						t.Errorf("output %s, want %s", short(string(out)), short(tt.want))
					}
					if !equalStrings(tp.offered, tt.wantOffered) {
						t.Errorf("offered %s, want %s", shortAll(tp.offered), shortAll(tt.wantOffered))
					}
					if len(tp.ends) != 1 || tp.ends[0] != io.EOF {
						t.Errorf("end called with %v, want once with io.EOF", tp.ends)
					}
					// The end is sticky and reported once.
					for range 3 {
						if k, err := r.Read(make([]byte, 8)); k != 0 || err != io.EOF {
							t.Errorf("Read after EOF = %d, %v", k, err)
						}
					}
					if len(tp.ends) != 1 {
						t.Errorf("end called %d times", len(tp.ends))
					}
				})
			}
		}
	}
}

// TestReaderNilTap passes everything through when there is no tap, and
// tolerates a nil end.
func TestReaderNilTap(t *testing.T) {
	in := "#1\r\n\n#" + strings.Repeat("y", 100<<10) + "\nlast"
	for _, n := range []int{1, 5, 1 << 20} {
		out, err := readAll(jsonrpcline.NewReader(strings.NewReader(in), 0, nil, nil), n)
		if err != io.EOF || string(out) != in {
			t.Errorf("buffer %d: got %s, %v", n, short(string(out)), err)
		}
	}
}

var errBoom = errors.New("boom")

// chunkReader returns its chunks one per Read, each with its error.
type chunkReader struct {
	chunks []string
	errs   []error
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, errors.New("chunkReader read after its last chunk")
	}
	if len(p) < len(c.chunks[0]) {
		return 0, errors.New("chunkReader buffer too small")
	}
	n := copy(p, c.chunks[0])
	err := c.errs[0]
	c.chunks, c.errs = c.chunks[1:], c.errs[1:]
	return n, err
}

func TestReaderError(t *testing.T) {
	tests := []struct {
		name        string
		src         func() io.Reader
		want        string
		wantOffered []string
	}{
		{
			name:        "error after complete lines",
			src:         func() io.Reader { return io.MultiReader(strings.NewReader("a\n#b\n"), iotest.ErrReader(errBoom)) },
			want:        "a\n",
			wantOffered: []string{"a", "#b"},
		},
		{
			name:        "error in the middle of a line passes the partial line",
			src:         func() io.Reader { return io.MultiReader(strings.NewReader("a\n#b\n#part"), iotest.ErrReader(errBoom)) },
			want:        "a\n#part",
			wantOffered: []string{"a", "#b"},
		},
		{
			name:        "error with the data of the same read",
			src:         func() io.Reader { return &chunkReader{chunks: []string{"x\n#y\nz"}, errs: []error{errBoom}} },
			want:        "x\nz",
			wantOffered: []string{"x", "#y"},
		},
		{
			name:        "error at once",
			src:         func() io.Reader { return iotest.ErrReader(errBoom) },
			want:        "",
			wantOffered: nil,
		},
		{
			name: "error in an assembled long line",
			src: func() io.Reader {
				return io.MultiReader(strings.NewReader("#1\n#"+strings.Repeat("x", 100<<10)), iotest.ErrReader(errBoom))
			},
			want:        "#" + strings.Repeat("x", 100<<10),
			wantOffered: []string{"#1"},
		},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 4096} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, n), func(t *testing.T) {
				tp := &tapped{take: hashLine}
				r := jsonrpcline.NewReader(tt.src(), 0, tp.tap, tp.end)
				out, err := readAll(r, n)
				if err != errBoom {
					t.Fatalf("read error %v, want %v", err, errBoom)
				}
				if string(out) != tt.want {
					t.Errorf("output %s, want %s", short(string(out)), short(tt.want))
				}
				if !equalStrings(tp.offered, tt.wantOffered) {
					t.Errorf("offered %s, want %s", shortAll(tp.offered), shortAll(tt.wantOffered))
				}
				if k, err := r.Read(make([]byte, 8)); k != 0 || err != errBoom {
					t.Errorf("Read after the error = %d, %v", k, err)
				}
				if len(tp.ends) != 1 || tp.ends[0] != errBoom {
					t.Errorf("end called with %v, want once with %v", tp.ends, errBoom)
				}
			})
		}
	}
}

// TestReaderEndBeforeEOF: end is called by the time Read reports the end,
// and not before the tap has seen every complete line.
func TestReaderEndBeforeEOF(t *testing.T) {
	var events []string
	r := jsonrpcline.NewReader(strings.NewReader("#1\nlast"), 0,
		func(l []byte) bool { events = append(events, "tap "+string(l)); return true },
		func(err error) { events = append(events, "end "+err.Error()) })
	out, err := readAll(r, 1)
	if err != io.EOF || string(out) != "last" {
		t.Fatalf("got %q, %v", out, err)
	}
	if want := []string{"tap #1", "end EOF"}; !equalStrings(events, want) {
		t.Fatalf("events %q, want %q", events, want)
	}
}

// TestReaderPipe reads a Reader fed through an io.Pipe by a writer that
// writes in odd pieces.
func TestReaderPipe(t *testing.T) {
	var in strings.Builder
	for i := range 2000 {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&in, "#%d\n", i)
		case 1:
			fmt.Fprintf(&in, "%d\r\n", i)
		case 2:
			fmt.Fprintf(&in, "#%s\n", strings.Repeat("z", i*37))
		default:
			in.WriteString("\n")
		}
	}
	in.WriteString("#tail")
	const max = 40000
	want, wantOffered := model([]byte(in.String()), max, hashLine)
	pr, pw := io.Pipe()
	go func() {
		b := []byte(in.String())
		for i := 1; len(b) > 0; i = i*7%1013 + 1 {
			n := min(i, len(b))
			if _, err := pw.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
		}
		pw.Close()
	}()
	tp := &tapped{take: hashLine}
	out, err := readAll(jsonrpcline.NewReader(pr, max, tp.tap, tp.end), 333)
	if err != io.EOF || !bytes.Equal(out, want) {
		t.Fatalf("got %s, %v; want %s", short(string(out)), err, short(string(want)))
	}
	if !equalStrings(tp.offered, wantOffered) {
		t.Fatalf("offered %d lines, want %d", len(tp.offered), len(wantOffered))
	}
}

// FuzzReader checks a Reader against the reference model: with a tap that
// takes the lines starting with '#', the output is the input without those
// lines (each with its "\n" or "\r\n"), except the lines longer than the
// limit (100 bytes before the "\n", a "\r" counted), which pass as they are
// even when they start with '#', and a last line without "\n", which passes
// too; the tap is offered exactly the complete lines within the limit. With a
// tap that takes nothing, the output is the input, byte for byte. The seed
// corpus is in testdata/fuzz/FuzzReader; chunk sets how the input arrives and
// how the Reader is read.
//
// The same checks then run on the input with each '~' made 700 of them, so
// that short inputs make lines longer than the Reader's 64 KiB buffer, with
// the limit of 100 and with one of 70000 (a line then longer than the buffer
// may still be tapped).
func FuzzReader(f *testing.F) {
	f.Add([]byte("#a\nb\n"), uint8(1))
	f.Add([]byte("#"+strings.Repeat("~", 100)+"\n#n\n"+strings.Repeat("~", 95)+"\r\nk\n#~"), uint8(200))
	f.Add([]byte(strings.Repeat("#", 101)+"\r\n#\r\n"), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		size := int(chunk%64) + 1
		wrap := sources[int(chunk/64)%len(sources)].wrap
		checkReader(t, data, 100, size, wrap, hashLine)
		if out := checkReader(t, data, 100, size, wrap, noLine); !bytes.Equal(out, data) {
			t.Fatalf("a tap taking nothing changed the input to %s", short(string(out)))
		}
		big := bytes.ReplaceAll(data, []byte("~"), bytes.Repeat([]byte("~"), 700))
		if len(big) == len(data) || len(big) > 1<<20 {
			return
		}
		size *= 61
		checkReader(t, big, 100, size, wrap, hashLine)
		checkReader(t, big, 70000, size, wrap, hashLine)
		if out := checkReader(t, big, 70000, size, wrap, noLine); !bytes.Equal(out, big) {
			t.Fatalf("a tap taking nothing changed the expanded input to %s", short(string(out)))
		}
	})
}

// checkReader reads data through a Reader with limit max, read size size and
// the source made by wrap, compares the result with the model, and returns
// the output.
func checkReader(t *testing.T, data []byte, max, size int, wrap func(io.Reader) io.Reader, take func([]byte) bool) []byte {
	t.Helper()
	want, wantOffered := model(data, max, take)
	tp := &tapped{take: take}
	out, err := readAll(jsonrpcline.NewReader(wrap(bytes.NewReader(data)), max, tp.tap, tp.end), size)
	if err != io.EOF {
		t.Fatalf("max %d: read error %v", max, err)
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("max %d: output %s, want %s", max, short(string(out)), short(string(want)))
	}
	if !equalStrings(tp.offered, wantOffered) {
		t.Fatalf("max %d: offered %s, want %s", max, shortAll(tp.offered), shortAll(wantOffered))
	}
	if len(tp.ends) != 1 || tp.ends[0] != io.EOF {
		t.Fatalf("max %d: end called with %v", max, tp.ends)
	}
	return out
}

// recorder records each Write to it, copied.
type recorder struct {
	mu     sync.Mutex
	writes []string
	err    error
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

func TestWriterWriteLine(t *testing.T) {
	big := strings.Repeat("b", 100<<10)
	tests := []struct {
		name  string
		parts []string
		want  string
	}{
		{"no parts", nil, "\n"},
		{"one part", []string{`{"a":1}`}, `{"a":1}` + "\n"},
		{"several parts", []string{`{"jsonrpc":"2.0","id":`, `"t-1"`, `,"method":"x"}`}, `{"jsonrpc":"2.0","id":"t-1","method":"x"}` + "\n"},
		{"empty parts", []string{"", "{}", ""}, "{}\n"},
		{"big message", []string{big, "x"}, big + "x\n"},
		{"after a big message", []string{"a"}, "a\n"},
	}
	rec := &recorder{}
	w := jsonrpcline.NewWriter(rec)
	var want []string
	for _, tt := range tests {
		parts := make([][]byte, len(tt.parts))
		for i, p := range tt.parts {
			parts[i] = []byte(p)
		}
		if err := w.WriteLine(parts...); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want = append(want, tt.want)
		if got := rec.get(); !equalStrings(got, want) {
			t.Fatalf("%s: writes %s, want %s (each message one Write)", tt.name, shortAll(got), shortAll(want))
		}
	}
}

func TestWriterWrite(t *testing.T) {
	rec := &recorder{}
	w := jsonrpcline.NewWriter(rec)
	for _, m := range []string{`{"jsonrpc":"2.0","method":"x"}` + "\n", "", "partial", "\n"} {
		n, err := w.Write([]byte(m))
		if n != len(m) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", m, n, err)
		}
	}
	if got, want := rec.get(), []string{`{"jsonrpc":"2.0","method":"x"}` + "\n", "", "partial", "\n"}; !equalStrings(got, want) {
		t.Fatalf("writes %q, want %q", got, want)
	}
}

func TestWriterErrors(t *testing.T) {
	rec := &recorder{err: errBoom}
	w := jsonrpcline.NewWriter(rec)
	if n, err := w.Write([]byte("x\n")); n != 0 || err != errBoom {
		t.Errorf("Write = %d, %v", n, err)
	}
	if err := w.WriteLine([]byte("x")); err != errBoom {
		t.Errorf("WriteLine = %v", err)
	}
	// The writer is usable again once the underlying one is.
	rec.mu.Lock()
	rec.err = nil
	rec.mu.Unlock()
	if err := w.WriteLine([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if got := rec.get(); !equalStrings(got, []string{"y\n"}) {
		t.Fatalf("writes %q", got)
	}
}

// choppyWriter writes each Write a few bytes at a time, yielding between
// pieces, so writes that are not serialised interleave.
type choppyWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (c *choppyWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 3 {
		c.mu.Lock()
		c.buf = append(c.buf, p[i:min(i+3, len(p))]...)
		c.mu.Unlock()
		runtime.Gosched()
	}
	return len(p), nil
}

func TestWriterConcurrent(t *testing.T) {
	const goroutines, each = 32, 60
	cw := &choppyWriter{}
	w := jsonrpcline.NewWriter(cw)
	msg := func(g, i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":"g%d-%d","result":{"pad":"%s"}}`, g, i, strings.Repeat("p", (g*31+i*17)%300))
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m := msg(g, i)
				if (g+i)%2 == 0 {
					if n, err := w.Write([]byte(m + "\n")); err != nil || n != len(m)+1 {
						errs <- fmt.Errorf("Write = %d, %v", n, err)
					}
				} else {
					cut := len(m) / 3
					if err := w.WriteLine([]byte(m[:cut]), []byte(m[cut:2*cut]), []byte(m[2*cut:])); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := map[string]int{}
	for g := range goroutines {
		for i := range each {
			want[msg(g, i)]++
		}
	}
	out := string(cw.buf)
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("output does not end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != goroutines*each {
		t.Fatalf("%d lines, want %d", len(lines), goroutines*each)
	}
	for _, l := range lines {
		if want[l] != 1 {
			t.Fatalf("line %s is not one of the messages written, or is repeated", short(l))
		}
		want[l]--
	}
}
