// Package signature signs skills and verifies their signatures. A
// signature is a DSSE envelope (the Dead Simple Signing Envelope of the
// secure-systems-lab) carrying an in-toto Statement v1 whose one subject is
// the skill's content digest, the digest `skillgate scan` computes, and
// whose predicate names the signer, the time, the trust the skill is
// signed for and the digest of its shipped manifest.json. The envelope
// lives in the skill directory as [FileName], a dot file, so it is never
// part of the digest it signs, never served to agents and never copied by
// an install.
//
// A whole root can be signed at once ([SignRoot]): one envelope at the
// root, [IndexFileName], whose statement has a subject per skill (its path
// under the root and its content digest). A scan verifies it once
// ([Keyring.Root]) and compares each skill's digest with its entry, where
// one signature per skill would cost a verification each.
//
// Keys are Ed25519 (the standard library); a key is trusted through a
// [Keyring] built from configuration, per trust tier, with a validity
// window and revocation. Nothing is ever signed without a human running
// `skillgate sign`: no other code path calls [Sign].
package signature

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// MaxKeyFileBytes bounds a key file read from disk.
const MaxKeyFileBytes = 16 << 10

// PEM block types of the key files.
const (
	pemPrivate = "PRIVATE KEY" // PKCS #8
	pemPublic  = "PUBLIC KEY"  // PKIX
)

// ErrKey is the error of a key file that cannot be used.
var ErrKey = errors.New("unusable key")

// GenerateKey makes a new Ed25519 key pair from rand (crypto/rand.Reader
// when nil).
func GenerateKey(rand io.Reader) (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("generating an Ed25519 key: %w", err)
	}
	return priv, nil
}

// MarshalPrivateKey encodes priv as a PKCS #8 PEM block, the form
// `skillgate key gen` writes (with mode 0600).
func MarshalPrivateKey(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivate, Bytes: der}), nil
}

// MarshalPublicKey encodes pub as a PKIX PEM block: the shareable form.
func MarshalPublicKey(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublic, Bytes: der}), nil
}

// ParsePrivateKey reads an Ed25519 private key from one PKCS #8 PEM block.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	der, err := onePEM(data, pemPrivate)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: a %T, not an Ed25519 key; make one with skillgate key gen", ErrKey, k)
	}
	return priv, nil
}

// ParsePublicKey reads an Ed25519 public key from one PKIX PEM block.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	der, err := onePEM(data, pemPublic)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: a %T, not an Ed25519 key", ErrKey, k)
	}
	return pub, nil
}

// onePEM returns the bytes of the only PEM block in data, which must be of
// type typ, with nothing but white space around it.
func onePEM(data []byte, typ string) ([]byte, error) {
	if len(data) > MaxKeyFileBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrKey, MaxKeyFileBytes)
	}
	b, rest := pem.Decode(data)
	switch {
	case b == nil:
		return nil, fmt.Errorf("%w: no PEM block (expected %q)", ErrKey, "-----BEGIN "+typ+"-----")
	case b.Type != typ:
		return nil, fmt.Errorf("%w: a %q PEM block, expected %q", ErrKey, b.Type, typ)
	case len(b.Headers) > 0:
		return nil, fmt.Errorf("%w: PEM headers are not allowed (an encrypted key?)", ErrKey)
	case len(trimSpace(rest)) > 0:
		return nil, fmt.Errorf("%w: data after the PEM block", ErrKey)
	}
	return b.Bytes, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

// KeyID is a public key's identifier, the one DSSE envelopes carry: the
// OpenSSH SHA-256 fingerprint ("SHA256:…"), which `ssh-keygen -l` also
// prints for the same key.
func KeyID(pub ed25519.PublicKey) (string, error) {
	id, err := dsse.SHA256KeyID(pub)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	return id, nil
}

// signer is a DSSE signer over an Ed25519 private key.
type signer struct {
	priv ed25519.PrivateKey
	id   string
}

func (s signer) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, data), nil
}
func (s signer) KeyID() (string, error) { return s.id, nil }

// verifier is a DSSE verifier over one Ed25519 public key.
type verifier struct {
	pub ed25519.PublicKey
	id  string
}

func (v verifier) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(v.pub, data, sig) {
		return errors.New("ed25519: invalid signature")
	}
	return nil
}
func (v verifier) KeyID() (string, error)   { return v.id, nil }
func (v verifier) Public() crypto.PublicKey { return v.pub }
