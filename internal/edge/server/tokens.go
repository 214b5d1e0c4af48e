package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/atomicfile"
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
	// Parent and Forward make the token's principal a sub-agent (see
	// [Delegation]); empty for an agent of its own.
	Parent  string   `json:"parent,omitempty"`
	Forward []string `json:"forward,omitempty"`
}

// Principal returns the principal the token stands for.
func (t Token) Principal() capability.Principal {
	return capability.Principal{Tenant: t.Tenant, Agent: t.Agent, Tier: skill.AgentTier(t.Tier)}
}

type tokenFile struct {
	Tokens []Token `json:"tokens"`
}

// SharedFile is a document kept in storage that several processes, on
// several hosts, share; store/postgres implements it. Revisions increase
// with every write; a document never written reads as (nil, 0).
type SharedFile interface {
	// ReadFile returns the content and revision of the document name.
	ReadFile(ctx context.Context, name string) ([]byte, int64, error)
	// FileRevision returns the revision of the document name: a cheap
	// read, to notice a change.
	FileRevision(ctx context.Context, name string) (int64, error)
	// UpdateFile replaces the document name with what change returns for
	// its content, atomically against concurrent updates in any process;
	// change's error aborts it and is returned wrapped.
	UpdateFile(ctx context.Context, name string, change func(old []byte) ([]byte, error)) (int64, error)
}

// TokenSet is where bearer tokens are kept: the file DATA/tokens.json of
// one data directory ([FileTokens]), or the document tokens.json of a
// store that several hosts share ([SharedTokens]), so that a token added
// on one host is accepted by every replica. Its methods are safe for
// concurrent use; changes are atomic across processes.
type TokenSet struct {
	path   string
	shared SharedFile
}

// FileTokens returns the token set of the file at path.
func FileTokens(path string) *TokenSet { return &TokenSet{path: path} }

// SharedTokens returns the token set kept as the document [TokensFile]
// of sf.
func SharedTokens(sf SharedFile) *TokenSet { return &TokenSet{shared: sf} }

// String names where the tokens are: the file's path, or "shared
// tokens.json".
func (s *TokenSet) String() string {
	if s.shared != nil {
		return "shared " + TokensFile
	}
	return s.path
}

// stamp identifies the set's current version cheaply ("" when empty).
func (s *TokenSet) stamp(ctx context.Context) (string, error) {
	if s.shared != nil {
		rev, err := s.shared.FileRevision(ctx, TokensFile)
		if err != nil {
			return "", fmt.Errorf("tokens: %w", err)
		}
		return fmt.Sprint(rev), nil
	}
	if fi, err := os.Stat(s.path); err == nil {
		return fmt.Sprint(fi.Size(), fi.ModTime().UnixNano()), nil
	}
	return "", nil
}

// read returns the tokens and the stamp of what it read.
func (s *TokenSet) read(ctx context.Context) ([]Token, string, error) {
	if s.shared != nil {
		b, rev, err := s.shared.ReadFile(ctx, TokensFile)
		if err != nil {
			return nil, "", fmt.Errorf("tokens: %w", err)
		}
		toks, err := parseTokens(s.String(), b)
		return toks, fmt.Sprint(rev), err
	}
	st, err := s.stamp(ctx)
	if err != nil {
		return nil, "", err
	}
	toks, err := readTokens(s.path)
	return toks, st, err
}

// update applies change to the tokens atomically.
func (s *TokenSet) update(ctx context.Context, change func([]Token) ([]Token, error)) error {
	if s.shared != nil {
		var refused error
		_, err := s.shared.UpdateFile(ctx, TokensFile, func(old []byte) ([]byte, error) {
			toks, err := parseTokens(s.String(), old)
			if err == nil {
				toks, err = change(toks)
			}
			if err != nil {
				refused = err
				return nil, err
			}
			return encodeTokens(toks)
		})
		if refused != nil {
			return refused
		}
		if err != nil {
			return fmt.Errorf("tokens: %w", err)
		}
		return nil
	}
	toks, err := readTokens(s.path)
	if err != nil {
		return err
	}
	toks, err = change(toks)
	if err != nil {
		return err
	}
	return writeTokens(s.path, toks)
}

// Add creates a bearer token for p and returns its secret (to give to the
// agent; it is not stored) and its record. Errors:
// [session.ErrInvalidPrincipal], storage errors.
func (s *TokenSet) Add(ctx context.Context, p capability.Principal, now time.Time) (string, Token, error) {
	return s.AddDelegated(ctx, p, Delegation{}, now)
}

// AddDelegated is [TokenSet.Add] for a sub-agent: d names its parent and
// what the parent forwards (a zero d is Add). The parent must hold a token
// of the set and rank at or above p's tier, and every token of p's
// principal must carry the same delegation (the policy engine keeps one
// per principal). Errors: [session.ErrInvalidPrincipal],
// [ErrInvalidDelegation], storage errors.
func (s *TokenSet) AddDelegated(ctx context.Context, p capability.Principal, d Delegation, now time.Time) (string, Token, error) {
	if err := p.Validate(); err != nil {
		return "", Token{}, err
	}
	if err := d.check(p); err != nil {
		return "", Token{}, err
	}
	secret := "sgt_" + rand.Text() + rand.Text()
	tok := Token{ID: "tok_" + strings.ToLower(rand.Text()[:12]), SHA256: hashSecret(secret),
		Tenant: p.Tenant, Agent: p.Agent, Tier: string(p.Tier), CreatedAt: now.UTC().Truncate(time.Second),
		Parent: d.Parent, Forward: d.Forward}
	err := s.update(ctx, func(toks []Token) ([]Token, error) {
		if err := admitDelegation(toks, tok); err != nil {
			return nil, err
		}
		return append(toks, tok), nil
	})
	if err != nil {
		return "", Token{}, err
	}
	return secret, tok, nil
}

// List returns the tokens in creation order.
func (s *TokenSet) List(ctx context.Context) ([]Token, error) {
	toks, _, err := s.read(ctx)
	return toks, err
}

// Remove deletes the token with the given id. Errors: [ErrTokenNotFound],
// storage errors.
func (s *TokenSet) Remove(ctx context.Context, id string) error {
	return s.update(ctx, func(toks []Token) ([]Token, error) {
		i := slices.IndexFunc(toks, func(t Token) bool { return t.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("%w: %q", ErrTokenNotFound, id)
		}
		return slices.Delete(toks, i, i+1), nil
	})
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
	return parseTokens(path, b)
}

// parseTokens parses and checks the token file's content b, named name in
// errors; empty content holds no tokens.
func parseTokens(name string, b []byte) ([]Token, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) > maxTokensFile {
		return nil, fmt.Errorf("tokens: %s is larger than %d bytes", name, maxTokensFile)
	}
	var f tokenFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("tokens: %s: %w", name, err)
	}
	for i, t := range f.Tokens {
		if err := t.Principal().Validate(); err != nil {
			return nil, fmt.Errorf("tokens: %s: token %d (%s): %w", name, i, t.ID, err)
		}
		if len(t.SHA256) != sha256.Size*2 {
			return nil, fmt.Errorf("tokens: %s: token %d (%s): sha256 must be %d hex digits", name, i, t.ID, sha256.Size*2)
		}
		if err := t.Delegation().check(t.Principal()); err != nil {
			return nil, fmt.Errorf("tokens: %s: token %d (%s): %w", name, i, t.ID, err)
		}
	}
	return f.Tokens, nil
}

// encodeTokens is the token file's content.
func encodeTokens(toks []Token) ([]byte, error) {
	b, err := json.MarshalIndent(tokenFile{Tokens: toks}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeTokens replaces the token file atomically (temporary file, fsync,
// rename), readable by its owner only.
func writeTokens(path string, toks []Token) error {
	b, err := encodeTokens(toks)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	if err := atomicfile.Write(path, b, 0o600); err != nil {
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
	return FileTokens(path).Add(context.Background(), p, now)
}

// ListTokens returns the tokens in the file at path, in creation order.
func ListTokens(path string) ([]Token, error) { return readTokens(path) }

// RemoveToken deletes the token with the given id. Errors: [ErrTokenNotFound],
// file errors.
func RemoveToken(path, id string) error { return FileTokens(path).Remove(context.Background(), id) }

// Tokens verifies bearer tokens against a [TokenSet]. It notices changes
// of a token file (a token added or removed while the server runs) at the
// next request; a shared set is read again by [Tokens.Reload], which the
// server calls when the store announces a change and every second. It is
// safe for concurrent use.
type Tokens struct {
	set *TokenSet

	mu     sync.Mutex
	stamp  string // the version of the set as loaded
	byHash map[string]Token
	missAt time.Time  // when the last read for unknown secrets began (shared sets)
	round  *missRound // the read unknown secrets wait for, not yet begun
}

// missRound is one read of a shared set on behalf of the unknown secrets
// that arrived before it began.
type missRound struct {
	at   time.Time     // when it begins
	done chan struct{} // closed when it has ended
	err  error
}

// OpenTokens returns a verifier over the token file at path (which may not
// exist yet: then no token is valid).
func OpenTokens(path string) (*Tokens, error) {
	return OpenTokenSet(context.Background(), FileTokens(path))
}

// OpenTokenSet returns a verifier over set.
func OpenTokenSet(ctx context.Context, set *TokenSet) (*Tokens, error) {
	t := &Tokens{set: set}
	if _, err := t.Reload(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// Path returns where the tokens are (see [TokenSet.String]).
func (t *Tokens) Path() string { return t.set.String() }

// Len returns how many tokens are loaded.
func (t *Tokens) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byHash)
}

// Reload reads the tokens again when they changed since they were loaded,
// and reports whether they did; tokens that cannot be read keep those
// last loaded, and the error is returned.
func (t *Tokens) Reload(ctx context.Context) (bool, error) {
	stamp, err := t.set.stamp(ctx)
	if err != nil {
		return false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if stamp == t.stamp && t.byHash != nil {
		return false, nil
	}
	toks, stamp, err := t.set.read(ctx)
	if err != nil {
		return false, err
	}
	t.byHash = make(map[string]Token, len(toks))
	for _, tok := range toks {
		t.byHash[tok.SHA256] = tok
	}
	t.stamp = stamp
	return true, nil
}

// Current returns the token whose secret hashes to hash (a [Token]'s
// SHA256, its identity) in the set as it is now: the set is read again
// first when it changed (a stat of a token file; a revision query of a
// shared store, so a change made on any host counts at once). A token
// removed, or changed to another secret, is not found. The admin console
// asks it on every request of a session, which is bound to the token it
// signed in with. The error is the set's: unreadable, nothing is found.
func (t *Tokens) Current(ctx context.Context, hash string) (Token, bool, error) {
	if _, err := t.Reload(ctx); err != nil {
		return Token{}, false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.byHash[hash]
	return tok, ok, nil
}

// Verify returns the token whose secret is secret. A token file is read
// again when it changed (a stat per request); a file that became
// unreadable keeps the tokens last loaded and the error is returned
// alongside. A shared set is read again only for a secret it does not
// know: the request waits for a read that begins after it arrived, and
// such reads begin at most every [missReload]. A token added a moment ago
// on another host thus always works, and unknown secrets cannot make every
// request a query; otherwise see [Tokens.Reload].
func (t *Tokens) Verify(secret string) (Token, bool, error) {
	var err error
	if t.set.shared == nil {
		_, err = t.Reload(context.Background())
	}
	h := hashSecret(secret)
	t.mu.Lock()
	tok, ok := t.byHash[h]
	t.mu.Unlock()
	if ok || t.set.shared == nil {
		return tok, ok, err
	}
	if err := t.missed(); err != nil {
		return Token{}, false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok = t.byHash[h]
	return tok, ok, nil
}

// missed waits for the next read of the shared set that begins after the
// call, starting it when no other caller has, and returns its error.
func (t *Tokens) missed() error {
	t.mu.Lock()
	r, lead := t.round, false
	if r == nil {
		r = &missRound{at: t.missAt.Add(missReload), done: make(chan struct{})}
		if now := time.Now(); r.at.Before(now) {
			r.at = now
		}
		t.round, lead = r, true
	}
	t.mu.Unlock()
	if !lead {
		<-r.done
		return r.err
	}
	time.Sleep(time.Until(r.at))
	t.mu.Lock()
	// Secrets that miss from here on need a read that begins after them.
	t.round, t.missAt = nil, time.Now()
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, r.err = t.Reload(ctx)
	close(r.done)
	return r.err
}

// missReload is how often at most a shared token set is read again for
// secrets it does not know.
const missReload = 100 * time.Millisecond

// WriteTokens writes tokens as the table of 'skillgate token ls': ids and
// principals, never secrets.
func WriteTokens(w io.Writer, toks []Token) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tAGENT\tTIER\tCREATED")
	for _, t := range toks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Tenant, t.Agent, t.Tier, t.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}
