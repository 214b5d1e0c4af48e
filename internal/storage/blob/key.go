package blob

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on keys. They hold for every store so that a tree written to one
// store can be copied to another: S3 limits keys to 1,024 bytes and most
// filesystems limit a name to 255 bytes.
const (
	// MaxKeyLen is the longest key, in bytes.
	MaxKeyLen = 1024
	// MaxSegmentLen is the longest single path segment of a key, in bytes.
	MaxSegmentLen = 255
)

// ValidateKey reports whether key is a valid object key, returning an error
// wrapping [ErrInvalidKey] that says what is wrong when it is not. A valid key
// is 1 to MaxKeyLen bytes of valid UTF-8, relative (no leading "/"), made of
// non-empty segments separated by single slashes (no trailing "/"), none of
// which is "." or ".." or longer than MaxSegmentLen bytes, and contains no
// backslash, NUL or other control character.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: key is %d bytes, limit %d", ErrInvalidKey, len(key), MaxKeyLen)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidKey, key)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("%w: %q contains a control character", ErrInvalidKey, key)
		case c == '\\':
			return fmt.Errorf("%w: %q contains a backslash", ErrInvalidKey, key)
		}
	}
	if key[0] == '/' {
		return fmt.Errorf("%w: %q starts with a slash (keys are relative)", ErrInvalidKey, key)
	}
	rest := key
	for rest != "" {
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
			if rest == "" {
				return fmt.Errorf("%w: %q ends with a slash", ErrInvalidKey, key)
			}
		} else {
			rest = ""
		}
		switch {
		case seg == "":
			return fmt.Errorf("%w: %q has an empty segment", ErrInvalidKey, key)
		case seg == "." || seg == "..":
			return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, key, seg)
		case len(seg) > MaxSegmentLen:
			return fmt.Errorf("%w: %q has a segment of %d bytes, limit %d", ErrInvalidKey, key, len(seg), MaxSegmentLen)
		}
	}
	return nil
}

// ValidatePrefix reports whether prefix is a valid listing prefix: either ""
// (everything) or a valid key followed by a single "/". It returns an error
// wrapping [ErrInvalidKey] otherwise.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if !strings.HasSuffix(prefix, "/") {
		return fmt.Errorf("%w: prefix %q must be empty or end with a slash", ErrInvalidKey, prefix)
	}
	if err := ValidateKey(prefix[:len(prefix)-1]); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	return nil
}
