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
// A SKILL.md that is a symbolic link is not followed: it counts as missing.
func Load(ctx context.Context, dir string, opts Options) (*Skill, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Skill{Dir: dir}
	content, name, err := ReadFile(dir)
	if name == "" {
		fi, serr := os.Stat(dir)
		switch {
		case errors.Is(serr, fs.ErrNotExist):
			s.errorf("", "Path does not exist: "+dir)
		case serr != nil:
			s.errorf("", fmt.Sprintf("Cannot read %s: %v", dir, unwrapPathError(serr)))
		case !fi.IsDir():
			s.errorf("", "Not a directory: "+dir)
		default:
			s.errorf("", "Missing required file: SKILL.md")
		}
		return s, nil
	}
	s.File = filepath.Join(dir, name)
	if err != nil {
		s.errorf("", err.Error())
		return s, nil
	}
	dirName := filepath.Base(dir)
	if filepath.IsAbs(dir) {
		dirName = filepath.Base(filepath.Clean(dir))
	} else if abs, err := filepath.Abs(dir); err == nil {
		dirName = filepath.Base(abs)
	}
	p := Parse(content, dirName, opts)
	p.Dir, p.File = s.Dir, s.File
	return p, nil
}

// ReadFile opens SKILL.md (else skill.md) in dir without following a
// link and without blocking (a FIFO in its place is refused, not waited
// on), and reads it within MaxFileBytes. name is "" when neither exists as
// a regular file; err then says nothing useful.
func ReadFile(dir string) (content []byte, name string, err error) {
	for _, n := range FileNames {
		f, err := os.OpenFile(filepath.Join(dir, n), os.O_RDONLY|oNoFollow|oNonBlock, 0)
		if err != nil {
			continue
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			f.Close()
			continue
		}
		defer f.Close()
		if fi.Size() > MaxFileBytes {
			return nil, n, FileTooLarge(n, fi.Size())
		}
		b := make([]byte, fi.Size())
		if _, err := io.ReadFull(f, b); err != nil {
			return nil, n, fmt.Errorf("cannot read %s: %v", n, err)
		}
		return b, n, nil
	}
	return nil, "", nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
