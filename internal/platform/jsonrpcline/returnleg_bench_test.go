package jsonrpcline_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// prose is about n bytes of Markdown prose, with the quotes, backslashes,
// newlines and non-ASCII letters real documents have.
func prose(n int) string {
	const para = "## Reading files\n\nThe agent calls `read_file` with a \"file_path\" and gets the text back, numbered like `cat -n`. Paths such as C:\\temp are refused; año, café and naïve stay as they are.\n\n| row | meaning |\n|---|---|\n| p50 | the median |\n\n"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(para)
	}
	return b.String()[:n]
}

const note = `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n"

// stream is an endless reader of head, a number counting from 1, tail,
// without allocating: the pipe's copy is its only cost.
type stream struct {
	head, tail []byte
	i          int64
	buf, rest  []byte
}

func (s *stream) Read(p []byte) (int, error) {
	if len(s.rest) == 0 {
		s.i++
		s.buf = append(strconv.AppendInt(append(s.buf[:0], s.head...), s.i, 10), s.tail...)
		s.rest = s.buf
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}

// BenchmarkReturnLeg is the relay's return leg for one tools/call result
// in process: the upstream's response line read by a Reader whose tap is
// Calls.Tap, matched to its call, and written back to the agent with the
// agent's id by a Writer, as mcpserver.Conn's relay does. The sizes are the
// gateway benchmark's two results (bench/gateway.sh).
func BenchmarkReturnLeg(b *testing.B) {
	for _, size := range []int{40, 62 << 10} {
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			text, _ := json.Marshal(prose(size))
			result := `{"content":[{"type":"text","text":` + string(text) + `}]}`
			calls := jsonrpcline.NewCalls(jsonrpcline.NewWriter(io.Discard), "skillgate-")
			agent := jsonrpcline.NewWriter(io.Discard)
			// The upstream: response i, then a notification the tap leaves
			// to the SDK, so that each Read returns once response i is done.
			upstream := &stream{head: []byte(`{"result":` + result + `,"jsonrpc":"2.0","id":"skillgate-`), tail: []byte("\"}\n" + note)}
			r := jsonrpcline.NewReader(upstream, 0, calls.Tap, nil)
			head, mid, tail := []byte(`{"jsonrpc":"2.0","id":`), []byte(`,"result":`), []byte(`}`)
			agentID := []byte("17")
			ctx := context.Background()
			params := json.RawMessage(`{"name":"read_text","arguments":{}}`)
			var got int
			done := func(r jsonrpcline.Response) {
				if r.Err != nil || r.Error != nil {
					b.Fatalf("%+v", r)
				}
				got = len(r.Result)
				agent.WriteLine(head, agentID, mid, r.Result, tail)
			}
			buf := make([]byte, 256)
			b.SetBytes(int64(len(result)))
			b.ReportAllocs()
			for b.Loop() {
				calls.Go(ctx, "tools/call", params, done)
				if n, err := r.Read(buf); string(buf[:n]) != note || err != nil {
					b.Fatalf("read %q, %v; want the notification", buf[:n], err)
				}
				if got != len(result) {
					b.Fatalf("result of %d bytes, want %d", got, len(result))
				}
			}
		})
	}
}

// BenchmarkObject62KB is jsonscan.Object alone over a 62 KB text result:
// the share of the return leg spent checking that the result is JSON.
func BenchmarkObject62KB(b *testing.B) {
	text, _ := json.Marshal(prose(62 << 10))
	line := []byte(`{"jsonrpc":"2.0","id":"skillgate-1","result":{"content":[{"type":"text","text":` + string(text) + `}]}}`)
	keys := []string{"id", "method", "result", "error"}
	vals := make([][]byte, len(keys))
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !jsonscan.Object(line, keys, vals) {
			b.Fatal("not an object")
		}
	}
}

// BenchmarkObjectDocs is BenchmarkObject62KB over the text the gateway
// benchmark returns (bench/gateway.sh): 62 KB of this repository's
// documentation, with its real density of escapes (one in about 55 bytes,
// against one in about 17 in prose's paragraphs).
func BenchmarkObjectDocs(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	files = append([]string{filepath.Join("..", "..", "..", "README.md")}, files...)
	var all []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data...)
	}
	for len(all) < 62<<10 {
		all = append(all, all...)
	}
	text, _ := json.Marshal(string(all[:62<<10]))
	line := []byte(`{"jsonrpc":"2.0","id":"skillgate-1","result":{"content":[{"type":"text","text":` + string(text) + `}]}}`)
	keys := []string{"id", "method", "result", "error"}
	vals := make([][]byte, len(keys))
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !jsonscan.Object(line, keys, vals) {
			b.Fatal("not an object")
		}
	}
}
