package oauthserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// errNotFound is what the storage answers for an unknown auth request,
// code, client or token; the provider turns it into the OAuth error the
// endpoint calls for (invalid_grant, invalid_client, inactive).
var errNotFound = errors.New("not found")

// storage is an in-memory op.Storage for one test server: clients, auth
// requests, codes, access tokens and refresh tokens behind one mutex. It
// is the whole "database" of the authorization server.
type storage struct {
	accessTTL  time.Duration
	refreshTTL time.Duration
	counters   *counters
	key        *ecdsa.PrivateKey
	keyID      string

	mu            sync.Mutex
	clients       map[string]*client
	authRequests  map[string]*authRequest
	codes         map[string]string // code → auth request id
	accessTokens  map[string]*accessToken
	refreshTokens map[string]*refreshToken
}

var _ op.Storage = (*storage)(nil)

// accessToken is an issued access token; its id is what the provider
// encrypts into the opaque bearer value.
type accessToken struct {
	id        string
	clientID  string
	subject   string
	refreshID string
	audience  []string
	scopes    []string
	expires   time.Time
}

// refreshToken is an issued refresh token; the value is its id. Rotation
// replaces it with a new one at every refresh grant.
type refreshToken struct {
	token    string
	clientID string
	subject  string
	audience []string
	scopes   []string
	authTime time.Time
	amr      []string
	access   string // id of the access token issued with it
	expires  time.Time
}

// refreshRequest adapts a stored refresh token to op.RefreshTokenRequest.
type refreshRequest struct{ *refreshToken }

func (r refreshRequest) GetAMR() []string             { return r.amr }
func (r refreshRequest) GetAudience() []string        { return r.audience }
func (r refreshRequest) GetAuthTime() time.Time       { return r.authTime }
func (r refreshRequest) GetClientID() string          { return r.clientID }
func (r refreshRequest) GetScopes() []string          { return r.scopes }
func (r refreshRequest) GetSubject() string           { return r.subject }
func (r refreshRequest) SetCurrentScopes(sc []string) { r.scopes = sc }

// newID returns 128 random bits as text, for ids, codes and tokens.
func newID() string { return rand.Text() }

// CreateAuthRequest stores a validated authorization request. OAuth 2.1
// makes PKCE mandatory, so a request without an S256 code challenge is
// refused here, before any login page is shown.
func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("PKCE with code_challenge_method=S256 is required")
	}
	if slices.Contains(req.Prompt, oidc.PromptNone) {
		return nil, oidc.ErrLoginRequired()
	}
	ar := &authRequest{
		id:           newID(),
		created:      time.Now(),
		clientID:     req.ClientID,
		redirectURI:  req.RedirectURI,
		state:        req.State,
		scopes:       req.Scopes,
		nonce:        req.Nonce,
		loginHint:    req.LoginHint,
		responseType: req.ResponseType,
		responseMode: req.ResponseMode,
		challenge:    &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod},
		subject:      userID,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authRequests[ar.id] = ar
	return ar, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok {
		return nil, fmt.Errorf("auth request: %w", errNotFound)
	}
	return ar, nil
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("code: %w", errNotFound)
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest forgets the request and its code, so that a code is
// good for one exchange only.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// approve completes the login step of an auth request for subject.
func (s *storage) approve(id, subject string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok {
		return fmt.Errorf("auth request: %w", errNotFound)
	}
	ar.subject = subject
	ar.authTime = time.Now()
	ar.done = true
	return nil
}

// request returns a copy of an auth request's fields for the login page.
func (s *storage) request(id string) (authRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok {
		return authRequest{}, false
	}
	return *ar, true
}

func (s *storage) newAccessToken(clientID, refreshID, subject string, audience, scopes []string) *accessToken {
	t := &accessToken{
		id:        newID(),
		clientID:  clientID,
		subject:   subject,
		refreshID: refreshID,
		audience:  audience,
		scopes:    scopes,
		expires:   time.Now().Add(s.accessTTL),
	}
	s.accessTokens[t.id] = t
	return t
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	clientID := ""
	switch r := req.(type) {
	case *authRequest:
		clientID = r.clientID
	case refreshRequest:
		clientID = r.clientID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.newAccessToken(clientID, "", req.GetSubject(), req.GetAudience(), req.GetScopes())
	return t.id, t.expires, nil
}

// CreateAccessAndRefreshTokens issues an access token with a new refresh
// token. With currentRefreshToken set it is a refresh grant: the current
// refresh token and its access token are retired (rotation) and the
// refresh is counted.
func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := &refreshToken{
		token:    newID(),
		subject:  req.GetSubject(),
		audience: req.GetAudience(),
		scopes:   req.GetScopes(),
		expires:  time.Now().Add(s.refreshTTL),
	}
	switch r := req.(type) {
	case *authRequest:
		rt.clientID, rt.authTime, rt.amr = r.clientID, r.authTime, r.GetAMR()
	case refreshRequest:
		rt.clientID, rt.authTime, rt.amr = r.clientID, r.authTime, r.amr
	default:
		return "", "", time.Time{}, oidc.ErrUnsupportedGrantType()
	}
	if current != "" {
		old, ok := s.refreshTokens[current]
		if !ok || time.Now().After(old.expires) {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("refresh token is invalid or expired")
		}
		delete(s.refreshTokens, current)
		delete(s.accessTokens, old.access)
		s.counters.refreshes.Add(1)
	}
	at := s.newAccessToken(rt.clientID, rt.token, rt.subject, rt.audience, rt.scopes)
	rt.access = at.id
	s.refreshTokens[rt.token] = rt
	return at.id, rt.token, at.expires, nil
}

func (s *storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refreshTokens[token]
	if !ok || time.Now().After(rt.expires) {
		return nil, fmt.Errorf("refresh token: %w", errNotFound)
	}
	cp := *rt
	cp.scopes = slices.Clone(rt.scopes)
	return refreshRequest{&cp}, nil
}

func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.accessTokens {
		if t.subject == userID && t.clientID == clientID {
			delete(s.accessTokens, id)
		}
	}
	for tok, rt := range s.refreshTokens {
		if rt.subject == userID && rt.clientID == clientID {
			delete(s.refreshTokens, tok)
		}
	}
	return nil
}

func (s *storage) GetRefreshTokenInfo(_ context.Context, _ string, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refreshTokens[token]
	if !ok {
		return "", "", op.ErrInvalidRefreshToken
	}
	return rt.subject, rt.token, nil
}

// RevokeToken implements RFC 7009 for one client: an access token id or a
// refresh token. Revoking a refresh token also retires the access token
// issued with it. An unknown token is not an error (RFC 7009 §2.2).
func (s *storage) RevokeToken(_ context.Context, token, _ string, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counters.revocations.Add(1)
	if at, ok := s.accessTokens[token]; ok {
		if at.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
		}
		delete(s.accessTokens, token)
		return nil
	}
	if rt, ok := s.refreshTokens[token]; ok {
		if rt.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
		}
		delete(s.refreshTokens, token)
		delete(s.accessTokens, rt.access)
	}
	return nil
}

// revokeRefresh retires one refresh token and its access token, as an
// administrator would on the server side, and reports whether it existed.
func (s *storage) revokeRefresh(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refreshTokens[token]
	if ok {
		delete(s.refreshTokens, token)
		delete(s.accessTokens, rt.access)
	}
	return ok
}

// revokeClient retires every refresh and access token of a client and
// returns how many refresh tokens it retired.
func (s *storage) revokeClient(clientID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for tok, rt := range s.refreshTokens {
		if rt.clientID == clientID {
			delete(s.refreshTokens, tok)
			n++
		}
	}
	for id, at := range s.accessTokens {
		if at.clientID == clientID {
			delete(s.accessTokens, id)
		}
	}
	return n
}

// signingKey is the server's ES256 key, in the shapes op wants.
type signingKey struct {
	id  string
	key *ecdsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return signingKey{s.keyID, s.key}, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.ES256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{signingKey{s.keyID, s.key}}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, fmt.Errorf("client: %w", errNotFound)
	}
	return c, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || c.secret == "" || c.secret != secret {
		return errors.New("invalid client id or secret")
	}
	return nil
}

func (s *storage) addClient(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.id] = c
}

func (s *storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, userID, _ string, _ []string) error {
	info.Subject = userID
	info.PreferredUsername = userID
	return nil
}

func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.accessTokens[tokenID]
	if !ok || time.Now().After(t.expires) {
		return errors.New("token is inactive")
	}
	info.Subject = subject
	info.PreferredUsername = subject
	return nil
}

// SetIntrospectionFromToken answers introspection for any registered
// resource server: the token is active while it is stored and unexpired.
func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.accessTokens[tokenID]
	if !ok || time.Now().After(t.expires) || t.subject != subject {
		return errors.New("token is inactive")
	}
	resp.Subject = t.subject
	resp.Username = t.subject
	resp.ClientID = t.clientID
	resp.Scope = slices.Clone(t.scopes)
	resp.Expiration = oidc.FromTime(t.expires)
	resp.Audience = slices.Clone(t.audience)
	resp.JWTID = t.id
	resp.TokenType = oidc.BearerToken
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("private_key_jwt is not supported")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("the JWT profile grant is not supported")
}

func (s *storage) Health(context.Context) error { return nil }
