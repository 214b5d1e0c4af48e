package skillsext

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"
)

// cursorPrefix versions the skills/list cursor: base64url of the prefix and
// the identity of the last skill of the page.
const cursorPrefix = "skills/list:1:"

// maxCursorBytes bounds a cursor from outside.
const maxCursorBytes = 2048

// ErrBadCursor means a cursor is not one skills/list returned.
var ErrBadCursor = errors.New("invalid cursor: it is not one that skills/list returned; omit it to start from the first page")

// EncodeCursor returns the cursor continuing after the skill with identity
// key.
func EncodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + key))
}

// DecodeCursor returns the identity a cursor continues after, or
// [ErrBadCursor].
func DecodeCursor(c string) (string, error) {
	if len(c) > maxCursorBytes {
		return "", ErrBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !utf8.Valid(b) {
		return "", ErrBadCursor
	}
	key, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok || key == "" {
		return "", ErrBadCursor
	}
	return key, nil
}
