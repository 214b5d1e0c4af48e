package vfs

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Sentinel errors. Every error an [FS] method returns is an [*Error] whose
// Kind is one of these, so callers branch with [errors.Is] and show the
// agent [Error.Error], the exact text.
var (
	// ErrNotFound: the file does not exist, is a directory where a file is
	// needed, or belongs to a skill that is not loaded (which must look the
	// same).
	ErrNotFound = errors.New("vfs: file not found")
	// ErrExists: Write found a file or directory at the path (Write only
	// creates).
	ErrExists = errors.New("vfs: file already exists")
	// ErrReadOnly: the path is under a read-only mount (/skills always is).
	ErrReadOnly = errors.New("vfs: read-only path")
	// ErrInvalidPath: the path is refused before any I/O: traversal, encoded
	// traversal, backslashes, drive letters, control characters, bounds, or a
	// path outside every mount; also a symbolic link that leaves its mount.
	ErrInvalidPath = errors.New("vfs: invalid path")
	// ErrInvalidArgument: an argument other than the path is unusable (an
	// empty old_string, an unknown grep output mode, a malformed glob).
	ErrInvalidArgument = errors.New("vfs: invalid argument")
	// ErrBinary: the file is not text (NUL bytes, invalid UTF-8 or a known
	// binary type); the message gives its type and size.
	ErrBinary = errors.New("vfs: binary file")
	// ErrTooLarge: the file or the new content is over the size limit.
	ErrTooLarge = errors.New("vfs: file too large")
	// ErrOffset: Read's offset is at or past the last line.
	ErrOffset = errors.New("vfs: line offset past end of file")
	// ErrNoMatch: Edit's old_string does not occur in the file.
	ErrNoMatch = errors.New("vfs: string not found in file")
	// ErrAmbiguous: Edit's old_string occurs more than once and replace_all
	// is false.
	ErrAmbiguous = errors.New("vfs: string occurs more than once")
	// ErrIO: the storage failed. The message shown to the agent says only
	// that; the cause is in the error chain for the operator's log.
	ErrIO = errors.New("vfs: storage error")
)

// Error is the error type of every [FS] method. Its Error method returns
// Msg, the exact agent-facing text (the deepagents ≤0.4 strings where they
// exist, see the package documentation), which never contains storage keys,
// tenants, hosts or other internals. Unwrap yields Kind and, for storage
// failures, the underlying cause, so log it with errors.Unwrap or %+v of the
// chain, never show it.
type Error struct {
	// Kind is one of the package's sentinel errors.
	Kind error
	// Msg is the complete text to show the agent.
	Msg string
	// Err is the internal cause, if any. It is for logs only.
	Err error
}

// Error returns the agent-facing message.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns Kind and, when present, the internal cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

func newErr(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// The exact deepagents 0.4.12 strings (reference §4.1), then skillgate's own
// for cases deepagents does not have.

func errNotFound(p string) *Error { return newErr(ErrNotFound, "Error: File '%s' not found", p) }

func errExists(p string) *Error {
	return newErr(ErrExists, "Cannot write to %s because it already exists. Read and then make an edit, or write to a new path.", p)
}

func errOffset(offset, n int) *Error {
	return newErr(ErrOffset, "Error: Line offset %d exceeds file length (%d lines)", offset, n)
}

func errNoMatch(old string) *Error {
	return newErr(ErrNoMatch, "Error: String not found in file: '%s'", old)
}

func errAmbiguous(old string, k int) *Error {
	return newErr(ErrAmbiguous, "Error: String '%s' appears %d times in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.", old, k)
}

func errTraversal(p string) *Error {
	return newErr(ErrInvalidPath, "Error: Path traversal not allowed: %s", p)
}

func errWindows(p string) *Error {
	return newErr(ErrInvalidPath, "Error: Windows absolute paths are not supported: %s. Please use virtual paths starting with / (e.g., /workspace/file.txt)", p)
}

func errOutside(p string, prefixes []string) *Error {
	return newErr(ErrInvalidPath, "Error: Path must start with one of %s: %s", pyList(prefixes), p)
}

func errGlobTraversal() *Error {
	return newErr(ErrInvalidPath, "Error: Path traversal not allowed in glob pattern")
}

func errEscape(p string) *Error {
	return newErr(ErrInvalidPath, "Error: Path traversal not allowed: %s (a symbolic link leaves the mount)", p)
}

func errReadOnly(p, mount string) *Error {
	return newErr(ErrReadOnly, "Error: Cannot modify '%s': '%s' is mounted read-only", p, mount)
}

func errBinary(p, mime string, size int64) *Error {
	return newErr(ErrBinary, "Error: '%s' is a binary file (%s, %d bytes) and cannot be read as text. Refer to it by path.", p, mime, size)
}

func errTooLarge(p string, size, limit int64) *Error {
	return newErr(ErrTooLarge, "Error: File '%s' is too large to read (%d bytes, limit %d bytes)", p, size, limit)
}

// errWindowTooLarge refuses a read whose lines (offset, limit) hold more
// than the bound of one read, max bytes.
func errWindowTooLarge(p string, offset, limit int, size, max int64) *Error {
	return newErr(ErrTooLarge, "Error: the lines of '%s' asked for (offset %d, limit %d) are more than %d bytes, the limit of one read (the file is %d bytes); read fewer lines with offset and limit, or search it with grep", p, offset, limit, max, size)
}

func errIO(verb, p string, cause error) *Error {
	e := newErr(ErrIO, "Error %s file '%s': storage error", verb, p)
	e.Err = cause
	return e
}

// pyList renders strings as Python's str(list) does for the paths we allow
// (deepagents tools return str(list)): ['a', 'b'].
func pyList(items []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyRepr(s))
	}
	b.WriteByte(']')
	return b.String()
}

// pyRepr quotes s like Python's repr of a str: single quotes unless s holds
// a single quote and no double quote; backslashes and the chosen quote are
// escaped; \n, \t and \r are spelled so, and other characters Python does
// not print (Go's unicode.IsPrint is the same class) as \xNN, \uNNNN or
// \UNNNNNNNN.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
