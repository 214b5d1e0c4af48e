package skillsext

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Scheme is the URI scheme of skill files.
const Scheme = "skill"

// SkillFile is the name of a skill's main file, the last segment of its URI.
const SkillFile = "SKILL.md"

// maxURIBytes bounds a URI from outside.
const maxURIBytes = 4096

// ErrBadURI means a URI is not one of a skill file or directory; the message
// says why.
var ErrBadURI = errors.New("invalid skill URI")

// URI is a parsed skill:// URI: Segments are its path, authority first
// ("skill://a/b/SKILL.md" is [a b SKILL.md]). It holds no empty, "." or
// ".." segment and needs no percent-encoding.
type URI struct {
	Segments []string
}

// String writes the URI back.
func (u URI) String() string { return Scheme + "://" + strings.Join(u.Segments, "/") }

// SkillPath returns the skill path of a SKILL.md URI (the URI without
// "/SKILL.md") and whether u is one.
func (u URI) SkillPath() (string, bool) {
	n := len(u.Segments)
	if n < 2 || u.Segments[n-1] != SkillFile {
		return "", false
	}
	return strings.Join(u.Segments[:n-1], "/"), true
}

// ParseURI parses a skill:// URI from outside. Errors wrap [ErrBadURI] and
// say what is wrong: another scheme, a query or fragment, percent-encoding,
// a trailing slash, an empty, "." or ".." segment, a character a URI path
// segment cannot hold unencoded.
func ParseURI(s string) (URI, error) {
	bad := func(why string) (URI, error) {
		shown := s
		if len(shown) > 256 {
			shown = shown[:256] + "…"
		}
		return URI{}, fmt.Errorf("%w %q: %s", ErrBadURI, shown, why)
	}
	switch {
	case len(s) > maxURIBytes:
		return bad(fmt.Sprintf("longer than %d bytes", maxURIBytes))
	case !utf8.ValidString(s):
		return bad("not valid UTF-8")
	case !strings.HasPrefix(s, Scheme+"://"):
		return bad("not a skill:// URI (skill files are served as skill://<skill-path>/<file-path>)")
	}
	rest := s[len(Scheme)+3:]
	switch {
	case rest == "":
		return bad("no skill path after skill://")
	case strings.ContainsAny(rest, "?#"):
		return bad("a query or fragment; skill URIs have neither")
	case strings.Contains(rest, "%"):
		return bad("percent-encoding; skillgate's skill URIs never need it, write the path as skills/list lists it")
	case strings.HasSuffix(rest, "/"):
		return bad("a trailing slash; directories are written without one (skill://<skill-path>)")
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		if err := checkSegment(seg, i == 0); err != "" {
			return bad(fmt.Sprintf("path segment %d %s", i+1, err))
		}
	}
	return URI{Segments: segs}, nil
}

// checkSegment says what is wrong with one path segment ("" when
// nothing): it must be non-empty, not "." or "..", and hold only
// characters a URI path segment holds unencoded (RFC 3986 pchar, and
// printable non-ASCII), the first (the authority) no ':' or '@'.
func checkSegment(seg string, authority bool) string {
	switch seg {
	case "":
		return "is empty (two slashes in a row, or a slash at the start)"
	case ".", "..":
		return fmt.Sprintf("is %q; skill URIs name files directly, without relative segments", seg)
	}
	for _, r := range seg {
		if !segmentRune(r, authority) {
			return fmt.Sprintf("holds %q, which a skill URI cannot hold unencoded", r)
		}
	}
	return ""
}

func segmentRune(r rune, authority bool) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r >= utf8.RuneSelf:
		return r != utf8.RuneError && unicode.IsGraphic(r) && !unicode.IsSpace(r)
	}
	switch r {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	case ':', '@':
		return !authority
	}
	return false
}

// BuildURI returns the URI of file (slash-separated, relative to the skill
// directory; "" for the skill's directory itself) of the skill at
// skillPath, or an error when it cannot be written without
// percent-encoding.
func BuildURI(skillPath, file string) (string, error) {
	s := Scheme + "://" + skillPath
	if file != "" {
		s += "/" + file
	}
	if _, err := ParseURI(s); err != nil {
		return "", err
	}
	return s, nil
}

// validName reports whether name is a valid Agent Skills name: 1–64
// lowercase letters, digits and hyphens, no hyphen at either end or twice
// in a row.
func validName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ValidName reports whether name is a valid Agent Skills name: 1–64
// lowercase letters, digits and hyphens, no hyphen at either end or twice
// in a row.
func ValidName(name string) bool { return validName(name) }
