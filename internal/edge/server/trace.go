package server

import (
	"net/http"
	"strconv"
)

// traced wraps the handler of route (a REST route's pattern, or the admin
// console's /admin/) so that each request gets a server span named
// "METHOD route", a child of its traceparent header, with the response's
// status (package telemetry). Without a tracer it returns h itself.
func (s *Server) traced(route string, h http.Handler) http.Handler {
	t := s.opts.Tracer
	if !t.Enabled() {
		return h
	}
	if _, path, ok := cutMethod(route); ok {
		route = path
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, span := t.StartHTTP(r, route)
		defer span.End()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		span.SetInt("http.response.status_code", sw.status)
		if sw.status >= 500 {
			span.Fail(strconv.Itoa(sw.status), http.StatusText(sw.status))
		}
	})
}

// cutMethod splits "GET /v1/x" into its method and path.
func cutMethod(pattern string) (method, path string, ok bool) {
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == ' ' {
			return pattern[:i], pattern[i+1:], true
		}
	}
	return "", pattern, false
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the underlying writer (flushes,
// deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
