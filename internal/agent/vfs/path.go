package vfs

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on agent-supplied paths.
const (
	// MaxPathLen is the longest path accepted, in bytes.
	MaxPathLen = 4096
	// MaxPathSegments is the most segments a path may have.
	MaxPathSegments = 64
	// MaxSegmentLen is the longest single segment, in bytes.
	MaxSegmentLen = 255
)

// CleanPath validates a path supplied by an agent and returns its canonical
// form: absolute, '/'-separated, with no empty, "." or trailing segments ("/"
// for the root). A relative path is taken as relative to "/", as deepagents'
// validate_path does. The checks, in order, each with its exact message
// (see the package documentation for the list):
//
//   - empty; longer than MaxPathLen bytes; not valid UTF-8; control
//     characters (NUL, newline, DEL, C1 controls, …);
//   - a ".." segment (with backslashes read as slashes) or a leading "~":
//     "Error: Path traversal not allowed: <path>";
//   - a Windows drive ("C:", "c:\…"): deepagents' exact message;
//   - any other backslash (UNC paths, mixed separators);
//   - percent-encoding that hides a dot, slash, backslash, percent sign
//     (double encoding), control character, overlong UTF-8 lead byte
//     (%c0, %c1) or an IIS-style %uXXXX escape: reported as traversal;
//   - more than MaxPathSegments segments, or a segment over MaxSegmentLen.
//
// Every error is an [*Error] with Kind [ErrInvalidPath].
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", newErr(ErrInvalidPath, "Error: Path must not be empty")
	}
	if len(p) > MaxPathLen {
		return "", newErr(ErrInvalidPath, "Error: Path is too long (%d bytes, limit %d)", len(p), MaxPathLen)
	}
	if !utf8.ValidString(p) {
		return "", newErr(ErrInvalidPath, "Error: Path is not valid UTF-8: %q", p)
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "", newErr(ErrInvalidPath, "Error: Path contains a control character: %q", p)
		}
	}
	if hasDotDot(p) || p[0] == '~' {
		return "", errTraversal(p)
	}
	if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
		return "", errWindows(p)
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return "", newErr(ErrInvalidPath, "Error: Backslashes are not allowed in paths: %s", p)
	}
	if hidesTraversal(p) {
		return "", errTraversal(p)
	}
	// Canonicalise: drop empty and "." segments.
	var b strings.Builder
	b.Grow(len(p) + 1)
	segs := 0
	for rest := p; rest != ""; {
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if seg == "" || seg == "." {
			continue
		}
		segs++
		if segs > MaxPathSegments {
			return "", newErr(ErrInvalidPath, "Error: Path has too many segments (more than %d): %s", MaxPathSegments, p)
		}
		if len(seg) > MaxSegmentLen {
			return "", newErr(ErrInvalidPath, "Error: Path segment is too long (%d bytes, limit %d): %s", len(seg), MaxSegmentLen, p)
		}
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if segs == 0 {
		return "/", nil
	}
	return b.String(), nil
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// hasDotDot reports a ".." segment, reading backslashes as separators as
// deepagents does (PurePosixPath(path.replace("\\", "/")).parts).
func hasDotDot(p string) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '.' && p[i+1] == '.' &&
			(i == 0 || p[i-1] == '/' || p[i-1] == '\\') &&
			(i+2 == len(p) || p[i+2] == '/' || p[i+2] == '\\') {
			return true
		}
	}
	return false
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hidesTraversal reports percent-escapes that a decoder somewhere (an HTTP
// layer, a storage gateway, a tool that "helpfully" unescapes) could turn
// into traversal: encoded '.', '/', '\', '%' (double encoding), control
// characters, overlong UTF-8 lead bytes and %uXXXX. A literal '%' not
// followed by two hex digits is an ordinary character.
func hidesTraversal(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			continue
		}
		if i+6 <= len(p) && (p[i+1] == 'u' || p[i+1] == 'U') && isHex4(p[i+2:i+6]) {
			return true
		}
		if i+2 >= len(p) {
			continue
		}
		hi, ok1 := unhex(p[i+1])
		lo, ok2 := unhex(p[i+2])
		if !ok1 || !ok2 {
			continue
		}
		switch c := hi<<4 | lo; {
		case c == '.', c == '/', c == '\\', c == '%', c < 0x20, c == 0x7f, c == 0xc0, c == 0xc1:
			return true
		}
	}
	return false
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		if _, ok := unhex(s[i]); !ok {
			return false
		}
	}
	return true
}
