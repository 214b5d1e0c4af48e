package skill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileNames are the accepted names of a skill's main file, preferred first,
// as the reference validator accepts them.
var FileNames = []string{"SKILL.md", "skill.md"}

// FindFile returns the name of the skill file in dir ("SKILL.md" or
// "skill.md") or "" when there is none. Only regular files count: a symbolic
// link named SKILL.md is not followed.
func FindFile(dir string) string {
	for _, n := range FileNames {
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err == nil && fi.Mode().IsRegular() {
			return n
		}
	}
	return ""
}

// ResolvePath turns what a user typed (a skill directory, or the path of its
// SKILL.md) into the skill directory, as skills-ref's CLI does.
func ResolvePath(p string) string {
	p = filepath.Clean(p)
	if strings.EqualFold(filepath.Base(p), "skill.md") {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return filepath.Dir(p)
		}
	}
	return p
}

// Load reads and validates the skill in dir. Like skills-ref's validate, a
// missing path, a non-directory or a missing SKILL.md become the single
// diagnostic of the result; the returned error is only ctx's. The directory
// name used for the name check is that of the absolute path, so "." works.
func Load(ctx context.Context, dir string, opts Options) (*Skill, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Skill{Dir: dir}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.errorf("", "Path does not exist: "+dir)
		return s, nil
	case err != nil:
		s.errorf("", fmt.Sprintf("Cannot read %s: %v", dir, unwrapPathError(err)))
		return s, nil
	case !fi.IsDir():
		s.errorf("", "Not a directory: "+dir)
		return s, nil
	}
	name := FindFile(dir)
	if name == "" {
		s.errorf("", "Missing required file: SKILL.md")
		return s, nil
	}
	s.File = filepath.Join(dir, name)
	content, err := readBounded(s.File, MaxFileBytes)
	if err != nil {
		s.errorf("", err.Error())
		return s, nil
	}
	dirName := filepath.Base(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		dirName = filepath.Base(abs)
	}
	p := Parse(content, dirName, opts)
	p.Dir, p.File = s.Dir, s.File
	return p, nil
}

// readBounded reads a regular file of at most limit bytes without following
// a final symbolic link.
func readBounded(path string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", filepath.Base(path), unwrapPathError(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; skillgate does not follow symbolic links", filepath.Base(path))
	}
	if fi.Size() > limit {
		return nil, errorOf(ErrTooLarge, "%s is %d bytes, over the %d-byte limit; move detail into files under references/", filepath.Base(path), fi.Size(), limit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", filepath.Base(path), unwrapPathError(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", filepath.Base(path), err)
	}
	if int64(len(b)) > limit {
		return nil, errorOf(ErrTooLarge, "%s grew over the %d-byte limit while being read", filepath.Base(path), limit)
	}
	return b, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
