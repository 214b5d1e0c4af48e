package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/skill"
)

// TokensFile is the name of the token file in the data directory.
const TokensFile = "tokens.json"

// maxTokensFile bounds the token file.
const maxTokensFile = 4 << 20

// ErrTokenNotFound: no token has the given id.
var ErrTokenNotFound = errors.New("token not found")

// Token is one bearer token as stored: its id, the principal it stands for,
// and the SHA-256 of the secret. The secret itself is shown once, when the
// token is added, and never stored.
type Token struct {
	ID        string    `json:"id"`
	SHA256    string    `json:"sha256"`
	Tenant    string    `json:"tenant"`
	Agent     string    `json:"agent"`
	Tier      string    `json:"tier"`
	CreatedAt time.Time `json:"created_at"`
}

// Principal returns the principal the token stands for.
func (t Token) Principal() capability.Principal {
	return capability.Principal{Tenant: t.Tenant, Agent: t.Agent, Tier: skill.AgentTier(t.Tier)}
}

type tokenFile struct {
	Tokens []Token `json:"tokens"`
}

// readTokens reads the token file; a missing file holds no tokens.
func readTokens(path string) ([]Token, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	if len(b) > maxTokensFile {
		return nil, fmt.Errorf("tokens: %s is larger than %d bytes", path, maxTokensFile)
	}
	var f tokenFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("tokens: %s: %w", path, err)
	}
	for i, t := range f.Tokens {
		if err := t.Principal().Validate(); err != nil {
			return nil, fmt.Errorf("tokens: %s: token %d (%s): %w", path, i, t.ID, err)
		}
		if len(t.SHA256) != sha256.Size*2 {
			return nil, fmt.Errorf("tokens: %s: token %d (%s): sha256 must be %d hex digits", path, i, t.ID, sha256.Size*2)
		}
	}
	return f.Tokens, nil
}

// writeTokens replaces the token file atomically (temporary file, fsync,
// rename), readable by its owner only.
func writeTokens(path string, toks []Token) error {
	b, err := json.MarshalIndent(tokenFile{Tokens: toks}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tokens-*.json")
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("tokens: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("tokens: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("tokens: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	return nil
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// AddToken creates a bearer token for p in the token file at path and
// returns its secret (to give to the agent; it is not stored) and its
// record. Errors: [session.ErrInvalidPrincipal], file errors.
func AddToken(path string, p capability.Principal, now time.Time) (string, Token, error) {
	if err := p.Validate(); err != nil {
		return "", Token{}, err
	}
	toks, err := readTokens(path)
	if err != nil {
		return "", Token{}, err
	}
	secret := "sgt_" + rand.Text() + rand.Text()
	tok := Token{ID: "tok_" + strings.ToLower(rand.Text()[:12]), SHA256: hashSecret(secret),
		Tenant: p.Tenant, Agent: p.Agent, Tier: string(p.Tier), CreatedAt: now.UTC().Truncate(time.Second)}
	if err := writeTokens(path, append(toks, tok)); err != nil {
		return "", Token{}, err
	}
	return secret, tok, nil
}

// ListTokens returns the tokens in the file at path, in creation order.
func ListTokens(path string) ([]Token, error) { return readTokens(path) }

// RemoveToken deletes the token with the given id. Errors: [ErrTokenNotFound],
// file errors.
func RemoveToken(path, id string) error {
	toks, err := readTokens(path)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(toks, func(t Token) bool { return t.ID == id })
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrTokenNotFound, id)
	}
	return writeTokens(path, slices.Delete(toks, i, i+1))
}

// Tokens verifies bearer tokens against the token file. It notices changes
// to the file (a token added or removed while the server runs) at the next
// request. It is safe for concurrent use.
type Tokens struct {
	path string

	mu     sync.Mutex
	stamp  string // size and mtime of the file as loaded
	byHash map[string]Token
}

// OpenTokens returns a verifier over the token file at path (which may not
// exist yet: then no token is valid).
func OpenTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path}
	if err := t.reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Path returns the token file's path.
func (t *Tokens) Path() string { return t.path }

// Len returns how many tokens are loaded.
func (t *Tokens) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byHash)
}

func (t *Tokens) reload() error {
	stamp := ""
	if fi, err := os.Stat(t.path); err == nil {
		stamp = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if stamp == t.stamp && t.byHash != nil {
		return nil
	}
	toks, err := readTokens(t.path)
	if err != nil {
		return err
	}
	t.byHash = make(map[string]Token, len(toks))
	for _, tok := range toks {
		t.byHash[tok.SHA256] = tok
	}
	t.stamp = stamp
	return nil
}

// Verify returns the token whose secret is secret. It reloads the file when
// it changed; a file that became unreadable keeps the tokens last loaded
// and the error is returned alongside.
func (t *Tokens) Verify(secret string) (Token, bool, error) {
	err := t.reload()
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.byHash[hashSecret(secret)]
	return tok, ok, err
}
