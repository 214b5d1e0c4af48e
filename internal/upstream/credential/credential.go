// Package credential keeps per-principal secrets (API tokens) that skills'
// MCP servers reference as ${NAME} in mcp.json. Each entry is scoped to a
// tenant, and optionally to one agent of that tenant; a principal's
// credential resolves agent entry → tenant entry → process environment.
//
// The store is one file under the data directory, DATA/credentials.age,
// encrypted at rest with age (an X25519 identity). The identity comes from
// [Options.Identity] (skillgate passes SKILLGATE_CREDENTIAL_KEY) or else
// from the key file DATA/credentials.key, created with mode 0600 the first
// time a credential is set. Writes are atomic (temporary file, fsync,
// rename) and serialised across processes by DATA/credentials.lock, so two
// concurrent writers never lose each other's entry. A store that cannot be
// decrypted or parsed is refused with an error naming the file: it is
// never read as empty and never overwritten.
//
// The same document keeps connections (issue 34): per scope, provider and
// account label, an OAuth grant or a static secret, with its state
// (active, expired, revoked), its last refresh error and which account is
// the scope's default for the provider ([Store.PutConnection],
// [Store.ResolveConnection]). The document is version 2; version 1
// (entries only) is still read, and written back as version 2.
//
// Values never leave the package except through [Store.Lookup] and
// [Store.Connection]: they are not in listings ([ConnectionInfo] has no
// secret), errors or the store's formatted output.
package credential

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// File names under the data directory.
const (
	// StoreFile holds the encrypted entries.
	StoreFile = "credentials.age"
	// KeyFile holds the age identity when none is supplied.
	KeyFile = "credentials.key"
	// LockFile serialises writers across processes.
	LockFile = "credentials.lock"
)

// Bounds on what the store keeps.
const (
	// MaxValueBytes bounds one secret value.
	MaxValueBytes = 64 << 10
	// MaxNameBytes bounds a credential name.
	MaxNameBytes = 128
	// MaxEntries bounds the entries of one store.
	MaxEntries = 4096
	// MaxStoreBytes bounds the encrypted store file read.
	MaxStoreBytes = 32 << 20
)

// Sentinel errors; messages name the field or file and what to do.
var (
	// ErrInvalidName means a credential name is not NAME
	// ([A-Z][A-Z0-9_]*, at most MaxNameBytes).
	ErrInvalidName = errors.New("invalid credential name")
	// ErrInvalidValue means a secret is empty, too large, not UTF-8 or
	// contains a NUL byte.
	ErrInvalidValue = errors.New("invalid credential value")
	// ErrInvalidScope means the tenant is missing or an id is malformed.
	ErrInvalidScope = errors.New("invalid credential scope")
	// ErrNotFound means no entry has that name and scope.
	ErrNotFound = errors.New("credential not found")
	// ErrUnreadable means the store file exists but cannot be decrypted or
	// parsed; it is refused, never emptied.
	ErrUnreadable = errors.New("credential store unreadable")
	// ErrKey means the identity is missing, malformed or unsafe.
	ErrKey = errors.New("credential key")
)

var namePattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// CheckName reports whether name is a valid credential name: an upper-case
// letter followed by upper-case letters, digits and '_', at most
// MaxNameBytes. The error quotes the name so that a newline or a space is
// visible.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the name is empty; use upper-case letters, digits and '_', e.g. GITHUB_TOKEN", ErrInvalidName)
	}
	if len(name) > MaxNameBytes || !namePattern.MatchString(name) {
		q := name
		if len(q) > 64 {
			q = q[:64] + "…"
		}
		return fmt.Errorf("%w: %q: a name is an upper-case letter followed by upper-case letters, digits and '_', at most %d bytes (e.g. GITHUB_TOKEN)", ErrInvalidName, q, MaxNameBytes)
	}
	return nil
}

// checkValue reports whether v may be stored; the error never holds v.
func checkValue(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%w: the value is empty", ErrInvalidValue)
	case len(v) > MaxValueBytes:
		return fmt.Errorf("%w: the value is %d bytes; the limit is %d", ErrInvalidValue, len(v), MaxValueBytes)
	case strings.IndexByte(v, 0) >= 0:
		return fmt.Errorf("%w: the value contains a NUL byte", ErrInvalidValue)
	case !utf8.ValidString(v):
		return fmt.Errorf("%w: the value is not valid UTF-8", ErrInvalidValue)
	}
	return nil
}

// Scope is who an entry serves: every agent of Tenant, or only Agent of
// Tenant when Agent is set.
type Scope struct {
	Tenant string `json:"tenant"`
	Agent  string `json:"agent,omitempty"`
}

// Check reports a missing tenant or a malformed id, with the rules of
// [capability.Principal].
func (s Scope) Check() error {
	if s.Tenant == "" {
		return fmt.Errorf("%w: a tenant is required (--tenant)", ErrInvalidScope)
	}
	agent := s.Agent
	if agent == "" {
		agent = "any" // the tenant alone is checked
	}
	p := capability.Principal{Tenant: s.Tenant, Agent: agent, Tier: "T1"}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidScope, err)
	}
	return nil
}

// String renders the scope: "tenant acme" or "agent acme/drafter".
func (s Scope) String() string {
	if s.Agent == "" {
		return "tenant " + s.Tenant
	}
	return "agent " + s.Tenant + "/" + s.Agent
}

// Entry is one stored credential as listed: its name and scope, never its
// value.
type Entry struct {
	Name string `json:"name"`
	Scope
}

// WriteTable writes credential entries as the table of 'skillgate
// credential ls': names and scopes (an agent of "*" for a tenant's entry),
// never values.
func WriteTable(w io.Writer, list []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTENANT\tAGENT")
	for _, e := range list {
		agent := e.Agent
		if agent == "" {
			agent = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Tenant, agent)
	}
	return tw.Flush()
}
