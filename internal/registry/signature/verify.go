package signature

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Why a signature is not accepted. Every error [Keyring.Verify] returns
// wraps one of them, with the file, the key and what to do.
var (
	// ErrUnsigned: the skill has no signature file.
	ErrUnsigned = errors.New("not signed")
	// ErrMalformed: the signature file is not a well-formed envelope of
	// skillgate's statement (truncated, another format).
	ErrMalformed = errors.New("malformed signature")
	// ErrUntrustedKey: signed by a key that is not trusted, or not for
	// this trust tier.
	ErrUntrustedKey = errors.New("untrusted key")
	// ErrBadSignature: the signature does not verify with the key it
	// names: the envelope was altered.
	ErrBadSignature = errors.New("invalid signature")
	// ErrRevoked: signed by a revoked key.
	ErrRevoked = errors.New("revoked key")
	// ErrExpired: signed by a key outside its validity window.
	ErrExpired = errors.New("key not valid now")
	// ErrModified: the skill's content changed after it was signed.
	ErrModified = errors.New("modified after signing")
	// ErrWrongSkill: the envelope is another skill's.
	ErrWrongSkill = errors.New("signature of another skill")
)

// TrustedKey is a public key trusted to sign skills of some tiers, within a
// validity window, until it is revoked.
type TrustedKey struct {
	// Name is how operators refer to the key (unique in a keyring).
	Name string
	// Public is the key.
	Public ed25519.PublicKey
	// Trust lists the tiers it may sign for (TrustFirstParty,
	// TrustImported).
	Trust []string
	// NotBefore and NotAfter bound when signatures by the key are
	// accepted, checked at verification time (zero: unbounded). Rotation:
	// sign with the new key before the old one's NotAfter.
	NotBefore, NotAfter time.Time
	// Revoked rejects every signature by the key, whenever it was made;
	// RevokedReason says why.
	Revoked       bool
	RevokedReason string
}

// Keyring is the set of trusted keys, by key identifier.
type Keyring struct {
	keys map[string]*trusted
}

type trusted struct {
	TrustedKey
	id string
	v  verifier
}

// NewKeyring checks keys (names and keys unique, tiers known, windows
// ordered) and returns their keyring.
func NewKeyring(keys []TrustedKey) (*Keyring, error) {
	k := &Keyring{keys: map[string]*trusted{}}
	names := map[string]bool{}
	for i, key := range keys {
		at := fmt.Sprintf("signing key %d (%s)", i+1, key.Name)
		if key.Name == "" {
			return nil, fmt.Errorf("signing key %d: a name is required", i+1)
		}
		if names[key.Name] {
			return nil, fmt.Errorf("%s: the name is used twice", at)
		}
		names[key.Name] = true
		if len(key.Public) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%s: %w: not an Ed25519 public key", at, ErrKey)
		}
		if len(key.Trust) == 0 {
			return nil, fmt.Errorf("%s: list the tiers it may sign for (%s, %s)", at, TrustFirstParty, TrustImported)
		}
		for _, t := range key.Trust {
			if t != TrustFirstParty && t != TrustImported {
				return nil, fmt.Errorf("%s: trust %q: use %s or %s", at, t, TrustFirstParty, TrustImported)
			}
		}
		if !key.NotBefore.IsZero() && !key.NotAfter.IsZero() && !key.NotBefore.Before(key.NotAfter) {
			return nil, fmt.Errorf("%s: not_before must be before not_after", at)
		}
		id, err := KeyID(key.Public)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if o := k.keys[id]; o != nil {
			return nil, fmt.Errorf("%s: the same key as %s", at, o.Name)
		}
		k.keys[id] = &trusted{TrustedKey: key, id: id, v: verifier{pub: key.Public, id: id}}
	}
	return k, nil
}

// Provenance is what a valid signature establishes.
type Provenance struct {
	// Digest is the content digest signed (and found).
	Digest string `json:"digest"`
	// KeyName and KeyID name the trusted key that signed.
	KeyName string `json:"keyName"`
	KeyID   string `json:"keyId"`
	// Index is the root's signed index that vouches for the skill, when
	// it is not the skill's own signature.
	Index string `json:"index,omitempty"`
	Predicate
}

// Verify checks the signature of the skill in dir for tier trust at time
// now: a well-formed envelope, signed by a key trusted for that tier,
// current and not revoked, over the digest dir has now, for this skill,
// with its manifest.json as signed.
func (k *Keyring) Verify(ctx context.Context, dir, trust string, now time.Time) (*Provenance, error) {
	env, err := ReadEnvelope(dir)
	if err != nil {
		return nil, err
	}
	sub, err := subjectOf(ctx, dir)
	if err != nil {
		return nil, err
	}
	p, err := k.VerifyEnvelope(ctx, env, sub, trust, now)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileName), err)
	}
	return p, nil
}

// Subject is what a skill is now: the values a signature must match.
type Subject struct {
	Name, Digest, ManifestDigest string
}

// ReadEnvelope reads dir/[FileName]: a regular file (never a link), at most
// [MaxEnvelopeBytes].
func ReadEnvelope(dir string) ([]byte, error) {
	p := filepath.Join(dir, FileName)
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w: no %s; sign it with skillgate sign %s --key KEY", dir, ErrUnsigned, FileName, dir)
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", p, ErrMalformed)
	}
	if fi.Size() > MaxEnvelopeBytes {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", p, ErrMalformed, MaxEnvelopeBytes)
	}
	return os.ReadFile(p)
}

// envelope is a DSSE envelope as read from a file: dsse.Envelope's
// fields, decoded strictly.
type envelope struct {
	PayloadType string              `json:"payloadType"`
	Payload     string              `json:"payload"`
	Signatures  []envelopeSignature `json:"signatures"`
}

// envelopeSignature is one signature of an envelope.
type envelopeSignature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// VerifyEnvelope is [Keyring.Verify] for an envelope already read and a
// subject already computed (a scan has both). Its errors do not name the
// file: the caller does.
func (k *Keyring) VerifyEnvelope(ctx context.Context, data []byte, want Subject, trust string, now time.Time) (*Provenance, error) {
	e, err := decodeEnvelope(data, MaxEnvelopeBytes, againSkill)
	if err != nil {
		return nil, err
	}
	body, key, err := k.verifySignatures(ctx, e, trust, now, againSkill)
	if err != nil {
		return nil, err
	}
	return k.accept(body, key, want, trust)
}

// fix is what the errors about one kind of signature tell to do: sign
// what (the skill, the root) again, how.
type fix struct{ what, how string }

// againSkill and againRoot are the fixes for a skill's signature and a
// root's signed index.
var (
	againSkill = fix{"skill", "skillgate sign"}
	againRoot  = fix{"root", "skillgate sign --root ROOT --key KEY"}
)

// String is the fix as the end of an error message.
func (f fix) String() string { return "sign the " + f.what + " again with " + f.how }

// decodeEnvelope reads data, at most max bytes, strictly as a DSSE
// envelope of skillgate's payload type with 1 to [MaxSignatures]
// signatures; again is the fix its errors give.
func decodeEnvelope(data []byte, max int, again fix) (*envelope, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s; %s", ErrMalformed, fmt.Sprintf(format, args...), again)
	}
	if len(data) > max {
		return nil, bad("larger than %d bytes", max)
	}
	e, err := readEnvelope(data)
	if err != nil {
		return nil, bad("not a DSSE envelope (%v)", err)
	}
	switch {
	case e.PayloadType != PayloadType:
		return nil, bad("payload type %q, expected %q", e.PayloadType, PayloadType)
	case len(e.Signatures) == 0:
		return nil, bad("no signatures")
	case len(e.Signatures) > MaxSignatures:
		return nil, bad("%d signatures, at most %d", len(e.Signatures), MaxSignatures)
	}
	return e, nil
}

// readEnvelope reads data strictly as a DSSE envelope (see [reader]).
func readEnvelope(data []byte) (*envelope, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	var e envelope
	top := fields{at: "envelope"}
	err = r.object("envelope", func(key string) error {
		if err := top.take(key, "payloadType", "payload", "signatures"); err != nil {
			return err
		}
		var err error
		switch key {
		case "payloadType":
			e.PayloadType, err = r.string("payloadType")
		case "payload":
			e.Payload, err = r.string("payload")
		case "signatures":
			err = r.array("signatures", func(i int) error {
				var s envelopeSignature
				at := fmt.Sprintf("signatures[%d]", i)
				f := fields{at: at}
				err := r.object(at, func(key string) error {
					if err := f.take(key, "keyid", "sig"); err != nil {
						return err
					}
					var err error
					if key == "keyid" {
						s.KeyID, err = r.string(at + ".keyid")
					} else {
						s.Sig, err = r.string(at + ".sig")
					}
					return err
				})
				e.Signatures = append(e.Signatures, s)
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return &e, nil
}

// verifySignatures returns the payload of e and the key of the first of
// its signatures that verifies with a current key trusted for trust.
// Each signature is tried with the one trusted key it names; when none
// verifies, the first signature's problem is reported.
func (k *Keyring) verifySignatures(ctx context.Context, e *envelope, trust string, now time.Time, again fix) ([]byte, *trusted, error) {
	var body, pae []byte
	var first error
	for _, s := range e.Signatures {
		key, err := k.usable(s.KeyID, trust, now, again)
		if err == nil && body == nil {
			// The payload is decoded once, whatever the signatures.
			if body, err = base64.StdEncoding.DecodeString(e.Payload); err != nil {
				return nil, nil, fmt.Errorf("%w: payload: not standard base64 (%v); %s", ErrMalformed, err, again)
			}
			pae = dsse.PAE(e.PayloadType, body)
		}
		if err == nil {
			// The DSSE pre-authentication encoding, signed by the key
			// the signature names.
			sig, derr := base64.StdEncoding.DecodeString(s.Sig)
			if derr != nil || key.v.Verify(ctx, pae, sig) != nil {
				err = fmt.Errorf("%w: the signature by key %s does not verify: the envelope was altered or made with another key", ErrBadSignature, key.Name)
			}
		}
		if err == nil {
			return body, key, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, nil, first
}

// usable returns the trusted key id if it may sign for trust at now; again
// is the fix its errors give.
func (k *Keyring) usable(id, trust string, now time.Time, again fix) (*trusted, error) {
	key := k.keys[id]
	switch {
	case key == nil:
		return nil, fmt.Errorf("%w: signed by key %s, which is not trusted; add its public key under signing.keys in config.yaml if you trust it", ErrUntrustedKey, printable(id))
	case key.Revoked:
		reason := ""
		if key.RevokedReason != "" {
			reason = " (" + key.RevokedReason + ")"
		}
		return nil, fmt.Errorf("%w: signed by key %s, which is revoked%s; sign the %s again with a current key", ErrRevoked, key.Name, reason, again.what)
	case !key.NotBefore.IsZero() && now.Before(key.NotBefore):
		return nil, fmt.Errorf("%w: key %s is valid from %s", ErrExpired, key.Name, key.NotBefore.UTC().Format(time.RFC3339))
	case !key.NotAfter.IsZero() && !now.Before(key.NotAfter):
		return nil, fmt.Errorf("%w: key %s expired at %s; sign the %s again with a current key", ErrExpired, key.Name, key.NotAfter.UTC().Format(time.RFC3339), again.what)
	case !slices.Contains(key.Trust, trust):
		return nil, fmt.Errorf("%w: key %s is trusted for %s, not for %s", ErrUntrustedKey, key.Name, strings.Join(key.Trust, ", "), trust)
	}
	return key, nil
}

// accept checks the statement a valid signature covers against want.
func (k *Keyring) accept(body []byte, key *trusted, want Subject, trust string) (*Provenance, error) {
	var st v1.Statement
	if err := protojson.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("%w: not an in-toto statement (%v)", ErrMalformed, err)
	}
	if err := st.Validate(); err != nil || st.GetType() != v1.StatementTypeUri {
		return nil, fmt.Errorf("%w: not an in-toto Statement v1 (%v)", ErrMalformed, err)
	}
	if st.GetPredicateType() != PredicateType || len(st.GetSubject()) != 1 {
		return nil, fmt.Errorf("%w: expected one subject and predicate type %s", ErrMalformed, PredicateType)
	}
	raw, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return nil, fmt.Errorf("%w: predicate: %v", ErrMalformed, err)
	}
	var p Predicate
	if err := strictjson.Decode(bytes.TrimSpace(raw), &p, 4); err != nil {
		return nil, fmt.Errorf("%w: predicate: %v", ErrMalformed, err)
	}
	sub := st.GetSubject()[0]
	signed := "sha256:" + sub.GetDigest()["sha256"]
	switch {
	case sub.GetName() != p.Skill:
		return nil, fmt.Errorf("%w: subject %q and predicate skill %q differ", ErrMalformed, sub.GetName(), p.Skill)
	case p.Skill != want.Name:
		return nil, fmt.Errorf("%w: it signs skill %q, this is %q; sign this skill with skillgate sign", ErrWrongSkill, printable(p.Skill), want.Name)
	case p.KeyID != key.id:
		return nil, fmt.Errorf("%w: the predicate names key %s, the signature is by %s", ErrMalformed, printable(p.KeyID), key.Name)
	case signed != want.Digest:
		return nil, fmt.Errorf("%w: signed content %s, the skill is now %s; review the change and sign again", ErrModified, printable(signed), want.Digest)
	case p.ManifestDigest != want.ManifestDigest:
		return nil, fmt.Errorf("%w: manifest.json is %s, signed %s", ErrModified, orNone(want.ManifestDigest), orNone(p.ManifestDigest))
	case p.Trust != trust:
		return nil, fmt.Errorf("%w: signed for %s, served as %s", ErrUntrustedKey, printable(p.Trust), trust)
	}
	return &Provenance{Digest: signed, KeyName: key.Name, KeyID: key.id, Predicate: p}, nil
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

// printable quotes a value from the envelope when it is not plain, and
// bounds it, so that an error message never carries control characters.
func printable(s string) string {
	if len(s) > 128 {
		s = s[:128] + "…"
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}
