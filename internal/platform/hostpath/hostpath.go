// Package hostpath removes the host's paths (the data directory, the
// sandbox state directories in it, the scanned skill roots, mounted
// directories) from text bound for agents. An agent sees skills under
// /skills and its files under /workspace; where those live on the host is
// not its business, and an upstream server's error or a storage error that
// names them would tell it (a username, a project layout, where the
// credential key is). [Scrubber.String] is the one function that does it;
// package gateway applies it where results and errors leave for an agent.
package hostpath

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// Placeholder replaces a host path (and a file:// URI of one) in text an
// agent receives; what follows the path (its subpath) is kept.
const Placeholder = "[host path]"

// Scrubber removes a fixed set of host paths from text. The zero value and
// nil remove nothing. A Scrubber is immutable and safe for concurrent use.
type Scrubber struct {
	// paths are the absolute paths to remove, longest first, so that a
	// path inside another is replaced whole.
	paths []string
	// jsonForms are paths as they appear inside a JSON string, for the
	// cheap check of JSON documents.
	jsonForms [][]byte
}

// New returns a scrubber of paths: each made absolute and clean, and also
// with its symbolic links resolved when that differs. Empty paths and the
// root directory are ignored (every path would match).
func New(paths ...string) *Scrubber {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if p == "." || p == string(filepath.Separator) || !filepath.IsAbs(p) || seen[p] {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		add(abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			add(real)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	s := &Scrubber{paths: out}
	for _, p := range out {
		b, _ := json.Marshal(p)
		s.jsonForms = append(s.jsonForms, b[1:len(b)-1])
	}
	return s
}

// Paths returns the paths the scrubber removes, longest first.
func (s *Scrubber) Paths() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.paths)
}

// String returns text with every occurrence of a host path replaced by
// [Placeholder]: the path itself, or a file:// URI of it, where it stands
// as a whole path (not inside a longer name: /srv/app does not match in
// /srv/apple, nor in /data/srv/app). What follows the path is kept.
func (s *Scrubber) String(text string) string {
	if s == nil {
		return text
	}
	for _, p := range s.paths {
		if !strings.Contains(text, p) {
			continue
		}
		text = replacePath(text, p)
	}
	return text
}

// replacePath replaces each whole occurrence of p in text.
func replacePath(text, p string) string {
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, p)
		if i < 0 {
			break
		}
		end := i + len(p)
		whole := (i == 0 || !nameByte(rest[i-1])) && (end == len(rest) || !nameByte(rest[end]))
		if !whole {
			b.WriteString(rest[:end])
			rest = rest[end:]
			continue
		}
		start := i
		if strings.HasSuffix(rest[:i], "file://") {
			start -= len("file://")
		}
		b.WriteString(rest[:start])
		b.WriteString(Placeholder)
		rest = rest[end:]
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(rest)
	return b.String()
}

// nameByte reports whether c may continue a file name, so that a match
// next to it is part of a longer name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c >= 0x80
}

// JSON returns the JSON document raw with [Scrubber.String] applied to
// every string in it (keys included). When no host path can be in it (the
// common case, found without decoding) raw itself is returned, so a result
// relayed byte for byte stays so. A document that does not decode is
// returned as it is: its reader refuses it anyway.
func (s *Scrubber) JSON(raw []byte) []byte {
	if s == nil || !s.mayHold(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	changed := false
	v = s.value(v, &changed)
	if !changed {
		return raw // an escape, but no host path: the bytes as they came
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// mayHold reports whether raw may hold a host path: one of them as it is
// written in a JSON string, or an escape that could spell one differently.
func (s *Scrubber) mayHold(raw []byte) bool {
	for _, f := range s.jsonForms {
		if bytes.Contains(raw, f) {
			return true
		}
	}
	return len(s.paths) > 0 && (bytes.Contains(raw, []byte(`\/`)) || bytes.Contains(raw, []byte(`\u00`)))
}

// value scrubs every string in v, setting *changed when one changed.
func (s *Scrubber) value(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		out := s.String(x)
		if out != x {
			*changed = true
		}
		return out
	case []any:
		for i := range x {
			x[i] = s.value(x[i], changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[s.value(k, changed).(string)] = s.value(e, changed)
		}
		return out
	}
	return v
}
