package vfs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// FileInfo is one entry of a listing (deepagents' FileInfo).
type FileInfo struct {
	// Path is the absolute virtual path; directories end in "/".
	Path string `json:"path"`
	// IsDir is true for directories.
	IsDir bool `json:"is_dir,omitempty"`
	// Size is the file size in bytes (0 for directories).
	Size int64 `json:"size,omitempty"`
	// ModifiedAt is the file's modification time, RFC 3339 in UTC ("" for
	// directories).
	ModifiedAt string `json:"modified_at,omitempty"`
}

// Listing is the result of [FS.LsInfo] and [FS.GlobInfo].
type Listing struct {
	// Entries are sorted by path.
	Entries []FileInfo
	// Truncated is true when entries were left out to respect the
	// configured bound.
	Truncated bool
}

func fileInfo(vpath string, in blob.Info) FileInfo {
	fi := FileInfo{Path: vpath, Size: in.Size}
	if !in.ModTime.IsZero() {
		fi.ModifiedAt = in.ModTime.UTC().Format(time.RFC3339)
	}
	return fi
}

// LsInfo lists the directory at path, one level (non-recursive), sorted by
// path, directories with a trailing "/" and IsDir set. "/" lists the mount
// points; /skills appears only once a skill is loaded, and "ls /skills" shows
// the loaded skills only. A missing path, a file, or a skill that is not
// loaded gives an empty listing, as deepagents does. An empty path means "/".
// Errors: path refusals [ErrInvalidPath]; storage failures [ErrIO].
func (f *FS) LsInfo(ctx context.Context, p string) (Listing, error) {
	if p == "" {
		p = "/"
	}
	t := f.tbl.Load()
	loc, err := f.resolve(t, p)
	if err != nil {
		return Listing{}, err
	}
	if loc.hidden {
		return Listing{}, nil
	}
	limit := f.opts.MaxListEntries
	byPath := map[string]FileInfo{}
	if loc.m != nil {
		d, err := blob.ListDir(ctx, loc.m.store, loc.dirPrefix(), limit+1)
		if err != nil {
			return Listing{}, f.storeErr("listing", loc.path, err)
		}
		base := strings.TrimSuffix(loc.path, "/")
		for _, in := range d.Files {
			vp := base + "/" + in.Key[len(loc.dirPrefix()):]
			byPath[vp] = fileInfo(vp, in)
		}
		for _, name := range d.Dirs {
			vp := base + "/" + name + "/"
			byPath[vp] = FileInfo{Path: vp, IsDir: true}
		}
	}
	// Mount points below this directory appear as directories and shadow
	// whatever the owning store has at the same name.
	for _, m := range t.mounts {
		if !under(m.path, loc.path) {
			continue
		}
		rest := m.path[len(loc.path):]
		if loc.path == "/" {
			rest = m.path
		}
		name := firstSegment(rest[1:])
		dir := strings.TrimSuffix(loc.path, "/") + "/" + name
		delete(byPath, dir)
		byPath[dir+"/"] = FileInfo{Path: dir + "/", IsDir: true}
	}
	out := Listing{Entries: make([]FileInfo, 0, len(byPath))}
	for _, fi := range byPath {
		out.Entries = append(out.Entries, fi)
	}
	slices.SortFunc(out.Entries, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	if len(out.Entries) > limit {
		out.Entries, out.Truncated = out.Entries[:limit], true
	}
	return out, nil
}

// fileRef is one file found by enumerate.
type fileRef struct {
	vpath string
	m     *mount
	info  blob.Info
}

// enumerate lists every file at or below loc, across the owning mount and
// all mounts nested below it, sorted by virtual path, at most max files.
// Files of the owning mount that a nested mount shadows are left out. The
// mounts are listed concurrently (Options.GrepWorkers at a time): a session
// with many loaded skills lists them in parallel.
func (f *FS) enumerate(ctx context.Context, t *table, loc location, max int) ([]fileRef, bool, error) {
	if loc.hidden {
		return nil, false, nil
	}
	type job struct {
		m      *mount
		prefix string
		out    []fileRef
		trunc  bool
		err    error
	}
	var jobs []*job
	if loc.m != nil {
		jobs = append(jobs, &job{m: loc.m, prefix: loc.dirPrefix()})
	}
	for _, m := range t.mounts {
		if under(m.path, loc.path) {
			jobs = append(jobs, &job{m: m, prefix: m.prefix})
		}
	}
	run := func(j *job) {
		infos, err := j.m.store.List(ctx, j.prefix, max+1)
		if err != nil {
			j.err = f.storeErr("reading", loc.path, err)
			return
		}
		if len(infos) > max {
			infos, j.trunc = infos[:max], true
		}
		var nested []string // mounts inside j.m shadow its files
		for _, other := range t.mounts {
			if under(other.path, j.m.path) {
				nested = append(nested, other.path)
			}
		}
		j.out = make([]fileRef, 0, len(infos))
	next:
		for _, in := range infos {
			vp := j.m.vpath(in.Key)
			for _, n := range nested {
				if under(vp, n) {
					continue next
				}
			}
			j.out = append(j.out, fileRef{vpath: vp, m: j.m, info: in})
		}
	}
	if len(jobs) == 1 {
		run(jobs[0])
	} else {
		var wg sync.WaitGroup
		sem := make(chan struct{}, f.opts.GrepWorkers)
		for _, j := range jobs {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				run(j)
			}()
		}
		wg.Wait()
	}
	var out []fileRef
	truncated := false
	for _, j := range jobs {
		if j.err != nil {
			return nil, false, j.err
		}
		out = append(out, j.out...)
		truncated = truncated || j.trunc
	}
	if loc.m != nil && len(out) == 0 && loc.rel != "" {
		// Nothing below it: the path may name a single file.
		in, err := loc.m.store.Stat(ctx, loc.key())
		switch {
		case err == nil:
			out = append(out, fileRef{vpath: loc.path, m: loc.m, info: in})
		case !errors.Is(err, blob.ErrNotFound):
			return nil, false, f.storeErr("reading", loc.path, err)
		}
	}
	if len(jobs) > 1 {
		slices.SortFunc(out, func(a, b fileRef) int { return strings.Compare(a.vpath, b.vpath) })
	}
	if len(out) > max {
		out, truncated = out[:max], true
	}
	return out, truncated, nil
}
