// Package testregistry serves package registries on loopback for tests:
// an npm registry ([NPM]) and a PEP 503 simple index ([PyPI]), so that a
// test fetches an MCP server package with the real npm or pip client and
// needs neither the internet nor a package installed beforehand. Each
// registry holds the packages the test adds, built in memory (tarballs,
// wheels), records the paths it was asked for (to assert that an offline
// run asked for none), and can serve a tampered package whose bytes differ
// from the digest it announces. [MCPServerJS] and [MCPServerPy] are the
// sources of a tiny stdio MCP server to put in such a package.
package testregistry

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// server is the part both registries share: a loopback httptest server,
// closed at the test's cleanup, and the log of the paths it was asked for.
type server struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []string
}

// start serves h on 127.0.0.1 until tb's cleanup, logging every request's
// path before h handles it.
func (s *server) start(tb testing.TB, h http.Handler) {
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(s.srv.Close)
}

// logged returns a copy of the paths requested so far.
func (s *server) logged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}
