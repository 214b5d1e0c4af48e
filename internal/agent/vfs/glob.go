package vfs

import (
	"context"
	"path"
	"strings"
)

// Glob bounds.
const (
	maxGlobLen          = 1024
	maxGlobAlternatives = 256
)

// globPattern is one brace alternative, split into segments.
type globPattern struct {
	segs []globSeg
}

type globSeg struct {
	pat      string // path.Match pattern ("[!" already rewritten to "[^")
	globstar bool   // "**"
	literal  bool   // no wildcard: compare directly
	dotOK    bool   // the segment starts with a literal '.', so it may match dotfiles
}

// compileGlob parses a wcmatch-style pattern (flags BRACE|GLOBSTAR): '*',
// '?', '[…]' (with '!' or '^' negation), '\' escapes, '{a,b}' alternatives
// (nested, at most 256) and '**' as a whole segment for zero or more
// directories. As in wcmatch without DOTGLOB, wildcards do not match a
// leading '.' and '**' does not enter dot-directories. A leading '/' is
// ignored. A ".." segment is refused.
func compileGlob(pattern string) ([]globPattern, error) {
	if len(pattern) > maxGlobLen {
		return nil, newErr(ErrInvalidArgument, "Error: Invalid glob pattern: longer than %d bytes", maxGlobLen)
	}
	for _, r := range pattern {
		if r < 0x20 || r == 0x7f {
			return nil, newErr(ErrInvalidArgument, "Error: Invalid glob pattern %q: control character", pattern)
		}
	}
	alts, ok := expandBraces(strings.TrimLeft(pattern, "/"), maxGlobAlternatives)
	if !ok {
		return nil, newErr(ErrInvalidArgument, "Error: Invalid glob pattern '%s': more than %d brace alternatives", pattern, maxGlobAlternatives)
	}
	out := make([]globPattern, 0, len(alts))
	for _, alt := range alts {
		var gp globPattern
		for _, seg := range strings.Split(alt, "/") {
			switch {
			case seg == "":
				continue
			case seg == "..":
				return nil, errGlobTraversal()
			case seg == "**":
				if n := len(gp.segs); n > 0 && gp.segs[n-1].globstar {
					continue // "**/**" is "**"
				}
				gp.segs = append(gp.segs, globSeg{globstar: true})
				continue
			}
			if len(gp.segs) >= MaxPathSegments {
				return nil, newErr(ErrInvalidArgument, "Error: Invalid glob pattern '%s': more than %d segments", pattern, MaxPathSegments)
			}
			pat := strings.ReplaceAll(seg, "[!", "[^")
			if _, err := path.Match(pat, ""); err != nil {
				return nil, newErr(ErrInvalidArgument, "Error: Invalid glob pattern '%s': malformed segment '%s'", pattern, seg)
			}
			gp.segs = append(gp.segs, globSeg{
				pat:     pat,
				literal: !strings.ContainsAny(seg, `*?[\`),
				dotOK:   seg[0] == '.',
			})
		}
		out = append(out, gp)
	}
	return out, nil
}

// expandBraces expands the first top-level {a,b,…} group recursively. A group
// without a top-level comma, or unbalanced, is literal (as in bash and
// wcmatch). It reports false when more than max alternatives result.
func expandBraces(p string, max int) ([]string, bool) {
	open, close, commas := -1, -1, []int(nil)
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open, commas = i, nil
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				if len(commas) > 0 {
					close = i
				}
			}
		}
		if close >= 0 {
			break
		}
	}
	if close < 0 {
		return []string{p}, true
	}
	head, tail := p[:open], p[close+1:]
	var out []string
	start := open + 1
	for _, c := range append(commas, close) {
		sub, ok := expandBraces(head+p[start:c]+tail, max-len(out))
		if !ok {
			return nil, false
		}
		out = append(out, sub...)
		if len(out) > max {
			return nil, false
		}
		start = c + 1
	}
	return out, true
}

// matchSeg matches one name against one non-globstar segment.
func (s globSeg) match(name string) bool {
	if s.literal {
		return s.pat == name
	}
	if name != "" && name[0] == '.' && !s.dotOK {
		return false
	}
	ok, _ := path.Match(s.pat, name)
	return ok
}

// match reports whether the relative path rel ('/'-separated) matches,
// with dynamic programming over segments (linear in pattern × path length,
// whatever the number of "**").
func (g globPattern) match(rel string) bool {
	var namesBuf [MaxPathSegments + 8]string
	names := namesBuf[:0]
	for rest := rel; ; {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			names = append(names, rest)
			break
		}
		names = append(names, rest[:i])
		rest = rest[i+1:]
		if len(names) >= len(namesBuf) {
			return false
		}
	}
	var a, b [MaxPathSegments + 9]bool
	prev, cur := a[:len(names)+1], b[:len(names)+1]
	prev[0] = true
	for _, s := range g.segs {
		if s.globstar {
			cur[0] = prev[0]
			for j := 1; j <= len(names); j++ {
				n := names[j-1]
				cur[j] = prev[j] || cur[j-1] && (n == "" || n[0] != '.')
			}
		} else {
			cur[0] = false
			for j := 1; j <= len(names); j++ {
				cur[j] = prev[j-1] && s.match(names[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(names)]
}

func matchAny(pats []globPattern, rel string) bool {
	for _, g := range pats {
		if g.match(rel) {
			return true
		}
	}
	return false
}

// GlobInfo returns the files under path (default "/") whose path relative
// to it matches pattern (wcmatch BRACE|GLOBSTAR semantics, see the package
// documentation: non-recursive unless "**"), sorted by path. When path is a
// file, its base name is matched. A path that does not exist, or a skill
// that is not loaded, gives an empty listing. Errors: path refusals and
// "Error: Path traversal not allowed in glob pattern" [ErrInvalidPath];
// malformed patterns [ErrInvalidArgument]; storage failures [ErrIO].
func (f *FS) GlobInfo(ctx context.Context, pattern, p string) (Listing, error) {
	if p == "" {
		p = "/"
	}
	pats, err := compileGlob(pattern)
	if err != nil {
		return Listing{}, err
	}
	t := f.tbl.Load()
	loc, err := f.resolve(t, p)
	if err != nil {
		return Listing{}, err
	}
	files, truncated, err := f.enumerate(ctx, t, loc, f.opts.MaxGrepFiles)
	if err != nil {
		return Listing{}, err
	}
	out := Listing{Truncated: truncated}
	base := strings.TrimSuffix(loc.path, "/") + "/"
	for _, fr := range files {
		rel := strings.TrimPrefix(fr.vpath, base)
		if fr.vpath == loc.path {
			rel = path.Base(fr.vpath)
		}
		if !matchAny(pats, rel) {
			continue
		}
		if len(out.Entries) == f.opts.MaxListEntries {
			out.Truncated = true
			break
		}
		out.Entries = append(out.Entries, fileInfo(fr.vpath, fr.info))
	}
	return out, nil
}
