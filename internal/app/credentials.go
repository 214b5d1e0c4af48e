package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/termtext"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// envCredentialKey supplies the credential store's age identity instead
// of the key file DATA/credentials.key.
const envCredentialKey = "SKILLGATE_CREDENTIAL_KEY"

// OpenCredentials opens the credential store: kept in the metadata store
// when that is PostgreSQL (shared by every replica on it), else in the data
// directory; its identity from SKILLGATE_CREDENTIAL_KEY, else
// DATA/credentials.key; its last resolution step is the process
// environment, for the variables credentials.from_environment of the
// configuration lists. db is the store the command already opened, or nil.
func (a *App) OpenCredentials(ctx context.Context, db ...store.DB) (*credential.Store, error) {
	var opened store.DB
	if len(db) > 0 {
		opened = db[0]
	}
	shared, err := a.sharedStore(ctx, opened)
	if err != nil {
		return nil, err
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	opts := credential.Options{
		Identity:        a.getenv(envCredentialKey),
		IdentitySource:  envCredentialKey,
		Environ:         a.getenv,
		FromEnvironment: cfg.Credentials.FromEnvironment,
	}
	if shared != nil {
		if err := a.adoptFile(ctx, shared, credential.StoreFile, filepath.Join(a.Data(), credential.StoreFile)); err != nil {
			return nil, fmt.Errorf("credential store: %w", err)
		}
		opts.Shared = shared
	}
	return credential.Open(ctx, a.Data(), opts)
}

// TokenSet returns where the bearer tokens are kept: in the metadata store
// when it is PostgreSQL (shared by every replica on it), else the file
// DATA/tokens.json. db is the store the command already opened, or nil.
func (a *App) TokenSet(ctx context.Context, db store.DB) (*server.TokenSet, error) {
	shared, err := a.sharedStore(ctx, db)
	if err != nil {
		return nil, err
	}
	local := filepath.Join(a.Data(), server.TokensFile)
	if shared != nil {
		if err := a.adoptFile(ctx, shared, server.TokensFile, local); err != nil {
			return nil, fmt.Errorf("tokens: %w", err)
		}
		return server.SharedTokens(shared), nil
	}
	return server.FileTokens(local), nil
}

// credentialFailure marks the credential store's refusals of bad input
// (an invalid name, scope or value) as usage errors.
func credentialFailure(err error) error {
	switch {
	case errors.Is(err, credential.ErrInvalidName), errors.Is(err, credential.ErrInvalidScope), errors.Is(err, credential.ErrInvalidValue):
		return Usagef("%v", err)
	}
	return err
}

// SetCredential stores value as the credential name of scope.
func (a *App) SetCredential(ctx context.Context, name string, scope credential.Scope, value string) error {
	st, err := a.OpenCredentials(ctx)
	if err != nil {
		return err
	}
	return st.Set(ctx, name, scope, value)
}

// CheckCredential checks a credential's name and scope as given on the
// command line: a usage error when either is wrong.
func CheckCredential(name string, scope credential.Scope) error {
	if err := credential.CheckName(name); err != nil {
		return Usagef("%v", err)
	}
	if err := scope.Check(); err != nil {
		return Usagef("%v", err)
	}
	return nil
}

// Credentials lists the stored credentials (names and scopes, never
// values), only tenant's when tenant is not empty; never nil.
func (a *App) Credentials(ctx context.Context, tenant string) ([]credential.Entry, error) {
	st, err := a.OpenCredentials(ctx)
	if err != nil {
		return nil, err
	}
	all, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	list := []credential.Entry{}
	for _, e := range all {
		if tenant == "" || e.Tenant == tenant {
			list = append(list, e)
		}
	}
	return list, nil
}

// RemoveCredential deletes the credential name of scope.
func (a *App) RemoveCredential(ctx context.Context, name string, scope credential.Scope) error {
	st, err := a.OpenCredentials(ctx)
	if err != nil {
		return err
	}
	return st.Remove(ctx, name, scope)
}

// CredentialKeygen makes the credential store's key in out, or in
// DATA/credentials.key (creating the data directory) when out is empty,
// and returns the file and the key's public recipient.
func (a *App) CredentialKeygen(out string) (file, recipient string, err error) {
	if out == "" {
		if err := a.CreateData(); err != nil {
			return "", "", err
		}
		out = filepath.Join(a.Data(), credential.KeyFile)
	}
	recipient, err = credential.NewKey(out)
	return out, recipient, err
}

// ReadSecret reads a credential value from in: at most
// credential.MaxValueBytes, one trailing newline (\n or \r\n) removed. On
// a terminal it prompts on prompt and reads one line without echo. An
// empty or too long value is a usage error.
func ReadSecret(in io.Reader, prompt io.Writer, name string, scope credential.Scope) (string, error) {
	if f, ok := in.(*os.File); ok && IsTerminal(f) {
		hint := "not echoed"
		if !echoHidden {
			hint = "echoed: prefer piping it in"
		}
		fmt.Fprintf(prompt, "value of %s for %s (%s): ", name, scope, hint)
		v, err := readNoEcho(f)
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("reading the value from the terminal: %w", err)
		}
		in = strings.NewReader(v)
	}
	b, err := io.ReadAll(io.LimitReader(in, credential.MaxValueBytes+3))
	if err != nil {
		return "", fmt.Errorf("reading the value from standard input: %w", err)
	}
	v := string(b)
	v = strings.TrimSuffix(v, "\n")
	v = strings.TrimSuffix(v, "\r")
	switch {
	case v == "":
		return "", Usagef("no value on standard input: pipe the secret in, e.g. printf '%%s' \"$TOKEN\" | skillgate credential set %s --tenant %s", name, scope.Tenant)
	case len(v) > credential.MaxValueBytes:
		return "", Usagef("the value on standard input is longer than %d bytes", credential.MaxValueBytes)
	}
	return v, nil
}

// IsTerminal reports whether w writes to a character device (a
// terminal), through a termtext.Writer or not.
func IsTerminal(w io.Writer) bool {
	_, ok := Terminal(w)
	return ok
}

// Terminal returns the terminal w writes to, through a termtext.Writer or
// not: for skillgate's own control sequences (scan's progress line),
// which must reach it unrendered.
func Terminal(w io.Writer) (*os.File, bool) {
	if t, ok := w.(*termtext.Writer); ok {
		w = t.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil, false
	}
	fi, err := f.Stat()
	return f, err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// AddToken makes a bearer token for the principal of agent, tier (T0–T4)
// and tenant, and returns it with its secret. A missing or malformed
// principal is a usage error naming the flag.
func (a *App) AddToken(ctx context.Context, agent, tier, tenant string) (secret string, tok server.Token, p capability.Principal, err error) {
	if p, err = Principal(agent, tier, tenant); err != nil {
		return "", tok, p, err
	}
	ts, err := a.TokenSet(ctx, nil)
	if err != nil {
		return "", tok, p, err
	}
	secret, tok, err = ts.Add(ctx, p, time.Now())
	return secret, tok, p, err
}

// Tokens lists the bearer tokens (ids and principals); never nil.
func (a *App) Tokens(ctx context.Context) ([]server.Token, error) {
	ts, err := a.TokenSet(ctx, nil)
	if err != nil {
		return nil, err
	}
	toks, err := ts.List(ctx)
	if toks == nil && err == nil {
		toks = []server.Token{}
	}
	return toks, err
}

// RemoveToken deletes the bearer token id (server.ErrTokenNotFound when
// there is none).
func (a *App) RemoveToken(ctx context.Context, id string) error {
	ts, err := a.TokenSet(ctx, nil)
	if err != nil {
		return err
	}
	return ts.Remove(ctx, id)
}

// TierFlag reads an agent tier flag (--tier, --parent-tier): a missing one
// is said to be required, a wrong one names the tiers.
func TierFlag(flag, value string) (skill.AgentTier, error) {
	if value == "" {
		return "", Usagef("%s is required (T0–T4)", flag)
	}
	t, err := skill.ParseAgentTier(value)
	if err != nil {
		return "", Usagef("%s: %v", flag, err)
	}
	return t, nil
}

// Principal reads the principal of agent, tier (T0–T4) and tenant given
// as flags: a usage error when one is missing or malformed.
func Principal(agent, tier, tenant string) (capability.Principal, error) {
	t, err := TierFlag("--tier", tier)
	if err != nil {
		return capability.Principal{}, err
	}
	p := capability.Principal{Tenant: tenant, Agent: agent, Tier: t}
	if err := p.Validate(); err != nil {
		return p, Usagef("%v", err)
	}
	return p, nil
}

// StdioPrincipal reads the principal and session of 'skillgate mcp' given
// as flags (or their environment variables): a usage error when one is
// missing or malformed.
func StdioPrincipal(agent, tier, tenant, sessionID string) (capability.Principal, error) {
	t, err := skill.ParseAgentTier(tier)
	if err != nil {
		if tier == "" {
			return capability.Principal{}, Usagef("--tier is required (or SKILLGATE_TIER): the agent's tier, T0–T4")
		}
		return capability.Principal{}, Usagef("--tier: %v", err)
	}
	p := capability.Principal{Tenant: tenant, Agent: agent, Tier: t}
	if err := p.Validate(); err != nil {
		return capability.Principal{}, Usagef("%v", err)
	}
	if sessionID != "" {
		if err := session.ValidID(sessionID); err != nil {
			return capability.Principal{}, Usagef("--session: %v", err)
		}
	}
	return p, nil
}
