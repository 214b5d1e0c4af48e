package vfs

import (
	"bytes"
	"context"
	"errors"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// GrepMatch is one matching line (deepagents' GrepMatch).
type GrepMatch struct {
	// Path is the absolute virtual path of the file.
	Path string `json:"path"`
	// Line is the 1-based line number.
	Line int `json:"line"`
	// Text is the line, without its terminator. Lines longer than
	// MaxLineLength characters are cut to that length.
	Text string `json:"text"`
}

// GrepResult is the result of [FS.GrepRaw].
type GrepResult struct {
	// Matches are sorted by path, then line.
	Matches []GrepMatch
	// Truncated is true when matches (or files to search) were left out to
	// respect the configured bounds.
	Truncated bool
}

// GrepRaw searches for pattern as a literal substring (not a regular
// expression) in every text file at or below path ("" or "/" for all
// mounts; a file path searches that file). glob, when not empty, keeps only
// files whose base name matches it (wcmatch BRACE semantics, e.g.
// "*.{md,txt}"). Binary files (known binary types, NUL bytes in the first
// 8 KiB, invalid UTF-8) and files over the size limit are skipped. Lines are
// numbered as Read numbers them. A path that does not exist, or a skill that
// is not loaded, gives no matches.
//
// Files are read concurrently (Options.GrepWorkers) into reused buffers; a
// file is checked for binary content only when it contains the pattern.
// Results are deterministic: when the match bound is reached the first
// matches in path order are kept and Truncated is set.
//
// Errors: path refusals [ErrInvalidPath]; a malformed glob
// [ErrInvalidArgument]; storage failures other than a file vanishing
// meanwhile [ErrIO].
func (f *FS) GrepRaw(ctx context.Context, pattern, p, glob string) (GrepResult, error) {
	if p == "" {
		p = "/"
	}
	var globs []globPattern
	if glob != "" {
		var err error
		if globs, err = compileGlob(glob); err != nil {
			return GrepResult{}, err
		}
	}
	t := f.tbl.Load()
	loc, err := f.resolve(t, p)
	if err != nil {
		return GrepResult{}, err
	}
	if strings.ContainsAny(pattern, "\r\n") {
		return GrepResult{}, nil // a line never contains a line break
	}
	files, truncated, err := f.enumerate(ctx, t, loc, f.opts.MaxGrepFiles)
	if err != nil {
		return GrepResult{}, err
	}
	if globs != nil || f.opts.MaxFileSize > 0 {
		kept := files[:0]
		for _, fr := range files {
			if fr.info.Size > f.opts.MaxFileSize {
				continue
			}
			if globs != nil && !matchAny(globs, path.Base(fr.vpath)) {
				continue
			}
			kept = append(kept, fr)
		}
		files = kept
	}
	res, err := f.searchFiles(ctx, files, []byte(pattern))
	if err != nil {
		return GrepResult{}, err
	}
	res.Truncated = res.Truncated || truncated
	return res, nil
}

// searchFiles greps files with a pool of workers. Workers take files in
// path order; once the match bound is reached no new file is started, so
// the files searched form a prefix of the list and keeping the first
// MaxGrepMatches of their matches gives the same answer as a sequential
// search.
func (f *FS) searchFiles(ctx context.Context, files []fileRef, pat []byte) (GrepResult, error) {
	limit := f.opts.MaxGrepMatches
	perFile := make([][]GrepMatch, len(files))
	var (
		next    atomic.Int64
		total   atomic.Int64
		stop    atomic.Bool
		errOnce sync.Once
		firstEr error
		wg      sync.WaitGroup
	)
	workers := min(f.opts.GrepWorkers, len(files))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				buf []byte
				dr  dirReader
			)
			defer dr.close()
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				fr := files[i]
				content, err := dr.read(ctx, fr.m.store, fr.info.Key, f.opts.MaxFileSize, buf)
				if err != nil {
					if ctx.Err() != nil {
						stop.Store(true)
						return
					}
					if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrTooLarge) || errors.Is(err, blob.ErrEscape) {
						continue // vanished, grew or escapes: not searchable
					}
					errOnce.Do(func() { firstEr = f.storeErr("reading", fr.vpath, err) })
					stop.Store(true)
					return
				}
				if cap(content) > cap(buf) {
					buf = content[:0]
				}
				m := searchContent(fr.vpath, content, pat, limit+1) // one more reveals truncation
				if len(m) > 0 {
					perFile[i] = m
					if total.Add(int64(len(m))) >= int64(limit) {
						stop.Store(true)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return GrepResult{}, f.storeErr("reading", "/", err)
	}
	if firstEr != nil {
		return GrepResult{}, firstEr
	}
	var res GrepResult
	for _, m := range perFile {
		if len(res.Matches)+len(m) > limit {
			res.Matches = append(res.Matches, m[:limit-len(res.Matches)]...)
			res.Truncated = true
			break
		}
		res.Matches = append(res.Matches, m...)
	}
	if stop.Load() && int(next.Load()) < len(files) && len(res.Matches) >= limit {
		res.Truncated = true
	}
	return res, nil
}

// searchContent returns up to limit matches of pat in content, or nil when
// content does not contain pat or is binary. The binary check runs only
// after a hit, so non-matching files cost one substring scan.
func searchContent(vpath string, content, pat []byte, limit int) []GrepMatch {
	i := bytes.Index(content, pat)
	if i < 0 {
		return nil
	}
	if _, ok := binaryExtType(vpath); ok || isBinaryContent(content) {
		return nil
	}
	var out []GrepMatch
	if bytes.IndexByte(content, '\r') >= 0 || len(pat) == 0 {
		// Slow path: walk every line (CR line breaks, or the empty pattern,
		// which matches every line).
		hasCR := bytes.IndexByte(content, '\r') >= 0
		for pos, n := 0, 1; pos < len(content) && len(out) < limit; n++ {
			var line []byte
			line, pos = nextLine(content, pos, hasCR)
			if bytes.Contains(line, pat) {
				out = append(out, GrepMatch{Path: vpath, Line: n, Text: lineText(line)})
			}
		}
		return out
	}
	// Fast path: jump from hit to hit, counting newlines in between.
	line, counted := 1, 0
	for i >= 0 && len(out) < limit {
		start := bytes.LastIndexByte(content[:i], '\n') + 1
		end := bytes.IndexByte(content[i:], '\n')
		if end < 0 {
			end = len(content)
		} else {
			end += i
		}
		line += bytes.Count(content[counted:start], []byte{'\n'})
		counted = start
		out = append(out, GrepMatch{Path: vpath, Line: line, Text: lineText(content[start:end])})
		if end >= len(content) {
			break
		}
		next := bytes.Index(content[end+1:], pat)
		if next < 0 {
			break
		}
		i = end + 1 + next
	}
	return out
}

// lineText copies a matched line, cut to MaxLineLength characters so that
// one minified file cannot blow up a result.
func lineText(line []byte) string {
	if len(line) > MaxLineLength && utf8.RuneCount(line) > MaxLineLength {
		cut, chars := 0, 0
		for cut < len(line) && chars < MaxLineLength {
			_, size := utf8.DecodeRune(line[cut:])
			cut += size
			chars++
		}
		line = line[:cut]
	}
	return string(line)
}

// dirReader reads files for one grep worker, keeping the last directory
// open when the store is a [blob.DirOpener]: files arrive sorted by path,
// so consecutive files mostly share a directory and each costs one lookup.
type dirReader struct {
	store  blob.Store
	prefix string
	h      blob.DirHandle
}

func (d *dirReader) read(ctx context.Context, st blob.Store, key string, max int64, buf []byte) ([]byte, error) {
	opener, ok := st.(blob.DirOpener)
	if !ok {
		content, _, err := blob.ReadInto(ctx, st, key, max, buf)
		return content, err
	}
	slash := strings.LastIndexByte(key, '/')
	prefix, name := key[:slash+1], key[slash+1:]
	if d.h == nil || d.store != st || d.prefix != prefix {
		d.close()
		h, err := opener.OpenDir(ctx, prefix)
		if err != nil {
			return nil, err
		}
		d.store, d.prefix, d.h = st, prefix, h
	}
	rc, info, err := d.h.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	content, _, err := blob.ReadBody(rc, info, max, buf)
	return content, err
}

func (d *dirReader) close() {
	if d.h != nil {
		d.h.Close()
		d.h = nil
	}
}
