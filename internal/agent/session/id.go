package session

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// ValidID reports whether s is a valid session id: an identifier as a
// tenant is one ([capability.CheckID]), 1 to 64 characters of ASCII
// letters, digits, '.', '_' and '-', starting with a letter or digit. Such
// ids are single storage-key segments and safe in HTTP headers and file
// names. The error wraps [ErrInvalidSessionID].
func ValidID(s string) error {
	if err := capability.CheckID("session id", s); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSessionID, err)
	}
	return nil
}

// NewID returns a fresh random session id (26 characters, 130 bits).
func NewID() string { return strings.ToLower(rand.Text()) }
