package vfs

import (
	"context"
	"errors"
	"strings"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// writable resolves p for Write or Edit: it must name a file inside a
// read-write mount. Everything under /skills is read-only, loaded or not, so
// the refusal reveals nothing about which skills exist.
func (f *FS) writable(p string) (location, error) {
	loc, err := f.resolve(f.tbl.Load(), p)
	if err != nil {
		return location{}, err
	}
	if loc.path == SkillsPath || under(loc.path, SkillsPath) {
		return location{}, errReadOnly(loc.path, SkillsPath)
	}
	if loc.m != nil && loc.m.readOnly {
		return location{}, errReadOnly(loc.path, loc.m.path)
	}
	return loc, nil
}

// Write creates the file at path with content. Like deepagents ≤0.4 it only
// creates: an existing file (or directory) is refused with "Cannot write to
// <path> because it already exists. Read and then make an edit, or write to
// a new path." [ErrExists]. Parent directories are implicit. Other errors:
// read-only mounts and /skills [ErrReadOnly]; content over the size limit
// [ErrTooLarge]; "Error writing file '<path>': '<dir>' is a file, not a
// directory" when an ancestor is a file [ErrExists]; path refusals
// [ErrInvalidPath]; storage failures [ErrIO]. Writes within one FS are
// serialised, so two concurrent Writes of a path cannot both succeed.
func (f *FS) Write(ctx context.Context, p, content string) error {
	loc, err := f.writable(p)
	if err != nil {
		return err
	}
	if loc.m == nil || loc.rel == "" {
		return errExists(loc.path) // "/", a mount point, or a directory above one
	}
	if int64(len(content)) > f.opts.MaxFileSize {
		return newErr(ErrTooLarge, "Error writing file '%s': content is %d bytes, limit %d bytes", loc.path, len(content), f.opts.MaxFileSize)
	}
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	st := loc.m.store
	switch _, err := st.Stat(ctx, loc.key()); {
	case err == nil:
		return errExists(loc.path)
	case !errors.Is(err, blob.ErrNotFound):
		return f.storeErr("writing", loc.path, err)
	}
	below, err := st.List(ctx, loc.key()+"/", 1)
	if err != nil {
		return f.storeErr("writing", loc.path, err)
	}
	if len(below) > 0 {
		return errExists(loc.path) // a directory
	}
	// No ancestor may be a file (object stores would allow it, a directory
	// tree cannot show it).
	for i := 0; i < len(loc.rel); i++ {
		if loc.rel[i] != '/' {
			continue
		}
		dir := loc.rel[:i]
		switch _, err := st.Stat(ctx, loc.m.prefix+dir); {
		case err == nil:
			return newErr(ErrExists, "Error writing file '%s': '%s' is a file, not a directory", loc.path, loc.m.path+"/"+dir)
		case !errors.Is(err, blob.ErrNotFound):
			return f.storeErr("writing", loc.path, err)
		}
	}
	if err := f.charge(ctx, loc, "writing", int64(len(content)), 1); err != nil {
		return err
	}
	if err := st.Put(ctx, loc.key(), strings.NewReader(content), int64(len(content))); err != nil {
		f.refund(loc, int64(len(content)), 1)
		if errors.Is(err, blob.ErrConflict) {
			return newErr(ErrExists, "Error writing file '%s': a file or directory is in the way", loc.path)
		}
		return f.storeErr("writing", loc.path, err)
	}
	return nil
}

// Edit replaces oldString with newString in the file at path and returns the
// number of occurrences replaced. oldString must occur exactly once unless
// replaceAll is true. Errors, with deepagents' exact text: "Error: File
// '<path>' not found" [ErrNotFound]; "Error: String not found in file:
// '<old>'" [ErrNoMatch]; "Error: String '<old>' appears <k> times in file.
// Use replace_all=True …" [ErrAmbiguous]; and: an empty oldString
// [ErrInvalidArgument]; read-only mounts and /skills [ErrReadOnly]; binary
// files [ErrBinary]; files or results over the size limit [ErrTooLarge];
// path refusals [ErrInvalidPath]; storage failures [ErrIO].
func (f *FS) Edit(ctx context.Context, p, oldString, newString string, replaceAll bool) (int, error) {
	loc, err := f.writable(p)
	if err != nil {
		return 0, err
	}
	if oldString == "" {
		return 0, newErr(ErrInvalidArgument, "Error: old_string must not be empty")
	}
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	raw, vpath, err := f.readText(ctx, loc.path)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && errors.Is(e.Kind, ErrIO) {
			return 0, errIO("editing", vpath, e.Err)
		}
		return 0, err
	}
	content := string(raw)
	k := strings.Count(content, oldString)
	switch {
	case k == 0:
		return 0, errNoMatch(oldString)
	case k > 1 && !replaceAll:
		return 0, errAmbiguous(oldString, k)
	}
	updated := strings.ReplaceAll(content, oldString, newString)
	if int64(len(updated)) > f.opts.MaxFileSize {
		return 0, newErr(ErrTooLarge, "Error editing file '%s': the result is %d bytes, limit %d bytes", vpath, len(updated), f.opts.MaxFileSize)
	}
	grow := int64(len(updated) - len(content))
	if err := f.charge(ctx, loc, "editing", grow, 0); err != nil {
		return 0, err
	}
	if err := loc.m.store.Put(ctx, loc.key(), strings.NewReader(updated), int64(len(updated))); err != nil {
		f.refund(loc, grow, 0)
		return 0, f.storeErr("editing", vpath, err)
	}
	return k, nil
}

// charge takes what a write adds from the quotas of its mount; the error is
// the agent-facing refusal.
func (f *FS) charge(ctx context.Context, loc location, verb string, dBytes, dFiles int64) error {
	if len(loc.m.quotas) == 0 {
		return nil
	}
	err := charge(ctx, loc.m.quotas, verb, loc.path, dBytes, dFiles)
	var e *Error
	if err != nil && !errors.As(err, &e) {
		return f.storeErr(verb, loc.path, err)
	}
	if e != nil {
		return e
	}
	return nil
}

// refund gives back what a failed write was charged.
func (f *FS) refund(loc location, dBytes, dFiles int64) {
	if len(loc.m.quotas) > 0 {
		_ = charge(context.Background(), loc.m.quotas, "", "", -dBytes, -dFiles)
	}
}
