package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// rawCall makes one request the SDK does not implement (the MCP Skills
// extension's methods, and resources/read with its bytes as sent) within
// d and returns its result: over stdio on the shared stream
// (jsonrpcline.Calls), over streamable HTTP as a POST in the SDK
// session's Mcp-Session-Id through the same client (declared headers,
// size bounds, no redirects).
func (u *upstream) rawCall(ctx context.Context, method string, params any, d time.Duration) (json.RawMessage, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, &ServerError{ServerID: u.id, Phase: method, Err: err}
	}
	p = withMeta(p, u.meta)
	if u.http != nil {
		return u.httpCall(ctx, method, p, d)
	}
	var calls *jsonrpcline.Calls
	if u.stdio != nil {
		if _, conn := u.stdio.current(); conn != nil {
			calls = conn.calls
		}
	}
	if calls == nil {
		return nil, &ServerError{ServerID: u.id, Phase: method, Err: ErrClosed}
	}
	ch := make(chan jsonrpcline.Response, 1)
	calls.GoWithin(ctx, method, p, d, errPhaseTimeout, func(r jsonrpcline.Response) {
		r.Result = bytes.Clone(r.Result)
		ch <- r
	})
	r := <-ch
	switch {
	case r.Err != nil:
		return nil, u.classify(errors.Is(r.Err, errPhaseTimeout), ctx, method, d, r.Err)
	case r.Error != nil:
		return nil, u.classify(false, ctx, method, d, r.Error)
	}
	return r.Result, nil
}

// httpCall is rawCall over streamable HTTP: the answer is the response
// body (application/json) or the event of a text/event-stream carrying the
// response with the request's id.
func (u *upstream) httpCall(ctx context.Context, method string, params json.RawMessage, d time.Duration) (json.RawMessage, error) {
	se := func(cause error) error { return &ServerError{ServerID: u.id, Phase: method, Err: cause} }
	cctx, cancel := context.WithTimeoutCause(ctx, d, errPhaseTimeout)
	defer cancel()
	id := "skillgate-raw-" + strconv.FormatUint(u.rawIDs.Add(1), 10)
	body, err := json.Marshal(jsonrpcline.Request{JSONRPC: "2.0", ID: jsonscan.Quote(id), Method: method, Params: params})
	if err != nil {
		return nil, se(err)
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, u.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, se(fmt.Errorf("%w: %w", ErrConnection, err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid := u.cs.ID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if u.proto != "" {
		req.Header.Set("Mcp-Protocol-Version", u.proto)
	}
	if u.meta != nil {
		setModernHeaders(req.Header, method, params)
	}
	resp, err := u.http.Do(req)
	if err != nil {
		return nil, u.classify(timedOut(cctx), ctx, method, d, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, se(fmt.Errorf("%w: HTTP status %s", ErrServerError, resp.Status))
	}
	var msg []byte
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		msg, err = sseResponse(resp.Body, id, u.o.limits.MaxFrameBytes)
	} else {
		msg, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		return nil, u.classify(timedOut(cctx), ctx, method, d, err)
	}
	var r struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(msg, &r); err != nil || string(r.ID) != strconv.Quote(id) {
		return nil, se(fmt.Errorf("%w: the response is not the answer to the request", ErrMalformedResponse))
	}
	if r.Error != nil {
		return nil, u.classify(false, ctx, method, d, r.Error)
	}
	if len(r.Result) == 0 {
		return nil, se(fmt.Errorf("%w: the response has no result", ErrMalformedResponse))
	}
	return r.Result, nil
}

// sseResponse reads a text/event-stream (already bounded per line by the
// client's transport) until the event holding the response with id, each
// event at most max bytes.
func sseResponse(r io.Reader, id string, max int) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<30) // the transport bounds each line
	var data []byte
	want := []byte(`"id":` + strconv.Quote(id))
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		switch {
		case len(line) == 0:
			if bytes.Contains(data, want) {
				return data, nil
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
			if len(data) > max {
				return nil, fmt.Errorf("%w: a server-sent event exceeded %d bytes", ErrResponseTooLarge, max)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if bytes.Contains(data, want) {
		return data, nil
	}
	return nil, io.ErrUnexpectedEOF
}
