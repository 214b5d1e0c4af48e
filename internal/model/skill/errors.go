package skill

import (
	"errors"
	"fmt"
)

// Sentinel errors returned (wrapped) by the parsing functions. Callers branch
// on them with errors.Is; the wrapped message names the file, line and fix.
var (
	// ErrNoFrontmatter means the file does not start with a "---" line.
	ErrNoFrontmatter = errors.New("SKILL.md must start with YAML frontmatter (---)")
	// ErrUnclosedFrontmatter means no closing "---" (or "...") line was found.
	ErrUnclosedFrontmatter = errors.New("SKILL.md frontmatter not properly closed with ---")
	// ErrInvalidYAML means the frontmatter is not YAML the mode accepts.
	ErrInvalidYAML = errors.New("Invalid YAML in frontmatter")
	// ErrNotMapping means the frontmatter parsed but is not a key/value mapping.
	ErrNotMapping = errors.New("SKILL.md frontmatter must be a YAML mapping")
	// ErrTooLarge means a file or the frontmatter exceeds its size limit.
	ErrTooLarge = errors.New("too large")
	// ErrEncoding means the file is not UTF-8 text or contains a NUL byte.
	ErrEncoding = errors.New("not UTF-8 text")
	// ErrTreeLimit means a skill tree has more files or bytes than allowed.
	ErrTreeLimit = errors.New("skill tree exceeds limits")
)

// kindError is an error with its own message that still matches a sentinel
// with errors.Is.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// errorOf returns an error with the given message that wraps kind.
func errorOf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// FileTooLarge is the error for a skill file of size bytes (as stat
// reports it, or as read) over MaxFileBytes: it names the file, its size
// and the bound, and the fix.
func FileTooLarge(name string, size int64) error {
	return errorOf(ErrTooLarge, "%s is %d bytes, over the %d-byte limit; move detail into files under references/", name, size, MaxFileBytes)
}
