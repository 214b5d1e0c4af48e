package app

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/platform/atomicfile"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/signature"
)

// keyName is what `key gen` accepts as a key's name: it names files.
var keyName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// KeyPair is a signing key made by [GenerateKey] ('skillgate key gen
// --json' prints it).
type KeyPair struct {
	Name       string `json:"name"`
	KeyID      string `json:"keyId"`
	PrivateKey string `json:"privateKeyFile"`
	PublicKey  string `json:"publicKeyFile"`
	PublicPEM  string `json:"publicKey"`
}

// GenerateKey makes an Ed25519 key pair for signing skills: dir/name.key
// (PKCS #8 PEM, mode 0600) and dir/name.pub (PKIX PEM). A name that cannot
// name files is a usage error; an existing file is never overwritten.
func GenerateKey(dir, name string) (*KeyPair, error) {
	if !keyName.MatchString(name) {
		return nil, Usagef("key name %q: use lower-case letters, digits, '.', '_' and '-' (at most 64)", name)
	}
	priv, err := signature.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	privPEM, err := signature.MarshalPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	pub := priv.Public().(ed25519.PublicKey)
	pubPEM, err := signature.MarshalPublicKey(pub)
	if err != nil {
		return nil, err
	}
	id, err := signature.KeyID(pub)
	if err != nil {
		return nil, err
	}
	privFile, pubFile := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	for _, f := range []string{privFile, pubFile} {
		if _, err := os.Lstat(f); err == nil {
			return nil, fmt.Errorf("%s exists: choose another name or remove it (a key is never overwritten)", f)
		}
	}
	if err := atomicfile.WriteNew(privFile, privPEM, 0o600); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteNew(pubFile, pubPEM, 0o644); err != nil {
		_ = os.Remove(privFile)
		return nil, err
	}
	return &KeyPair{Name: name, KeyID: id, PrivateKey: privFile, PublicKey: pubFile, PublicPEM: string(pubPEM)}, nil
}

// IndexVerdict is one skill of a signed index as verify-signature reports
// it.
type IndexVerdict struct {
	Rel    string `json:"rel"`
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
}

// IndexReport is the verdict on a root's signed index and the skills it
// lists ('skillgate verify-signature ROOT --json' prints it).
type IndexReport struct {
	Valid  bool           `json:"valid"`
	Index  string         `json:"index"`
	Reason string         `json:"reason,omitempty"`
	Error  string         `json:"error,omitempty"`
	Signer string         `json:"signer,omitempty"`
	KeyID  string         `json:"keyId,omitempty"`
	Skills []IndexVerdict `json:"skills"`
	// Missing counts the skills the index lists that the walk did
	// not find: removed since, or beyond the walk's bounds.
	Missing int `json:"missing"`

	// IndexFailed says the index itself did not verify (Error says why).
	IndexFailed bool `json:"-"`
	// Signed is the verified index, nil when it did not verify.
	Signed *signature.Index `json:"-"`
}

// VerifyIndex checks the signed index of root for trust with the keys of
// kr, then every skill under root (found as a scan finds them, within
// cfg's limits) that it lists.
func VerifyIndex(ctx context.Context, kr *signature.Keyring, root, trust string, cfg *Config) (*IndexReport, error) {
	rc := kr.Root(ctx, root, trust, time.Now())
	ix, ierr := rc.Index()
	out := &IndexReport{Index: rc.IndexPath(), Skills: []IndexVerdict{}}
	if ierr != nil {
		out.Reason, out.Error, out.IndexFailed = SignatureReason(ierr), fmt.Sprintf("%s: %v", rc.IndexPath(), ierr), true
	} else {
		out.Signed = ix
		out.Signer, out.KeyID = ix.Predicate.Signer, ix.KeyID
		res, err := discover.Walk(ctx, discover.Root{Path: root}, Limits(cfg, 0, 0))
		if err != nil {
			return nil, err
		}
		for _, c := range res.Candidates {
			if !ix.Lists(c.Rel) {
				continue
			}
			v := IndexVerdict{Rel: c.Rel, Valid: true}
			if _, err := rc.Verify(ctx, c.Dir); err != nil {
				v.Valid, v.Reason, v.Error = false, SignatureReason(err), err.Error()
			}
			out.Skills = append(out.Skills, v)
		}
		out.Missing = ix.Len() - len(out.Skills)
	}
	out.Valid = ierr == nil
	for _, v := range out.Skills {
		out.Valid = out.Valid && v.Valid
	}
	return out, nil
}

// SignatureReason is the reason code of a verification error (unsigned,
// malformed, untrusted_key, invalid_signature, revoked, expired, modified,
// wrong_skill, else error).
func SignatureReason(err error) string {
	for _, r := range []struct {
		err  error
		code string
	}{
		{signature.ErrUnsigned, "unsigned"}, {signature.ErrMalformed, "malformed"},
		{signature.ErrUntrustedKey, "untrusted_key"}, {signature.ErrBadSignature, "invalid_signature"},
		{signature.ErrRevoked, "revoked"}, {signature.ErrExpired, "expired"},
		{signature.ErrModified, "modified"}, {signature.ErrWrongSkill, "wrong_skill"},
	} {
		if errors.Is(err, r.err) {
			return r.code
		}
	}
	return "error"
}

// LoadSigningKey reads the private key of 'skillgate sign --key': a file
// of at most signature.MaxKeyFileBytes holding a key from 'key gen'. A
// file that cannot be read or holds no key is a usage error.
func LoadSigningKey(keyFile string) (ed25519.PrivateKey, error) {
	data, err := fileinfo.ReadRegular(keyFile, signature.MaxKeyFileBytes)
	if err != nil {
		return nil, Usagef("--key: %v", err)
	}
	priv, err := signature.ParsePrivateKey(data)
	if err != nil {
		return nil, Usagef("--key %s: %v", keyFile, err)
	}
	return priv, nil
}

// SignatureVerdict is the verdict of 'skillgate verify-signature' on one
// skill (its --json): valid, or why not, with the provenance of a valid
// signature.
type SignatureVerdict struct {
	Valid      bool                  `json:"valid"`
	Reason     string                `json:"reason,omitempty"`
	Error      string                `json:"error,omitempty"`
	Provenance *signature.Provenance `json:"provenance,omitempty"`
}

// NewSignatureVerdict makes the verdict on a verification that returned
// p and err.
func NewSignatureVerdict(p *signature.Provenance, err error) SignatureVerdict {
	v := SignatureVerdict{Valid: err == nil, Provenance: p}
	if err != nil {
		v.Reason, v.Error = SignatureReason(err), err.Error()
	}
	return v
}

// SignRequest is what 'skillgate sign' signs: the skill in Dir, or every
// skill under Root in one index (found within MaxDepth and MaxDirs, 0: the
// configuration's or the defaults), with the private key in KeyFile, for
// Signer (default: the key file's name) and the trust tier Trust.
type SignRequest struct {
	Dir, Root, KeyFile, Signer, Trust string
	MaxDepth, MaxDirs                 int
}

// Signing is what [App.Sign] signed: one skill, or a root's index.
type Signing struct {
	Skill *signature.Signed
	Index *signature.SignedIndex
	root  string
}

// Sign signs the skill or the root of r. A request with no key, no
// directory, or both a directory and a root, an unreadable key or a bad
// configuration is a usage error.
func (a *App) Sign(ctx context.Context, r SignRequest) (*Signing, error) {
	switch {
	case r.KeyFile == "":
		return nil, Usagef("sign needs --key FILE (a private key from 'skillgate key gen')")
	case r.Root == "" && r.Dir == "":
		return nil, Usagef("sign needs DIR (one skill) or --root ROOT (every skill under ROOT)")
	case r.Root != "" && r.Dir != "":
		return nil, Usagef("sign takes DIR or --root ROOT, not both")
	}
	priv, err := LoadSigningKey(r.KeyFile)
	if err != nil {
		return nil, err
	}
	if r.Signer == "" {
		r.Signer = strings.TrimSuffix(filepath.Base(r.KeyFile), ".key")
	}
	opts := signature.SignOptions{Signer: r.Signer, Trust: r.Trust}
	if r.Root == "" {
		s, err := signature.Sign(ctx, r.Dir, priv, opts)
		return &Signing{Skill: s}, err
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	ix, err := signature.SignRoot(ctx, r.Root, priv, signature.IndexOptions{SignOptions: opts, Limits: Limits(cfg, r.MaxDepth, r.MaxDirs)})
	return &Signing{Index: ix, root: r.Root}, err
}

// JSON is what 'skillgate sign --json' prints: the signature or the index.
func (s *Signing) JSON() any {
	if s.Index != nil {
		return s.Index
	}
	return s.Skill
}

// WriteText writes what was signed to w, and the skills an index left
// out to notes.
func (s *Signing) WriteText(w, notes io.Writer) {
	if ix := s.Index; ix != nil {
		for _, sk := range ix.Skipped {
			fmt.Fprintf(notes, "not signed: %s: %s\n", sk.Rel, sk.Reason)
		}
		fmt.Fprintf(w, "signed %s of %s for %s by %s (key %s): %s\n", plural.Of(ix.Skills, "skill", "skills"), s.root, ix.Predicate.Trust, ix.Predicate.Signer, ix.Predicate.KeyID, ix.Path)
		return
	}
	sk := s.Skill
	fmt.Fprintf(w, "signed %s %s for %s by %s (key %s): %s\n", sk.Predicate.Skill, sk.Digest, sk.Predicate.Trust, sk.Predicate.Signer, sk.Predicate.KeyID, sk.Path)
}

// SignatureCheck is the outcome of [App.VerifySignature]: the verdict on
// one skill, with Err saying why its signature is not valid, or the report
// on a root's signed index.
type SignatureCheck struct {
	Verdict SignatureVerdict
	Err     error
	Index   *IndexReport
}

// VerifySignature checks the signature of the skill in dir for the trust
// tier against the configuration's trusted keys: its own, or the signed
// index of root that lists it. When dir holds a signed index and root is
// not given, the index and every skill it lists are checked instead. A bad
// trust tier or configuration is a usage error.
func (a *App) VerifySignature(ctx context.Context, dir, root, trust string) (*SignatureCheck, error) {
	if trust != signature.TrustFirstParty && trust != signature.TrustImported {
		return nil, Usagef("--trust %q: use first_party or imported", trust)
	}
	cfg, kr, err := a.configKeyring()
	if err != nil {
		return nil, err
	}
	if root == "" {
		if _, err := os.Lstat(filepath.Join(dir, signature.IndexFileName)); err == nil {
			ix, err := VerifyIndex(ctx, kr, dir, trust, cfg)
			return &SignatureCheck{Index: ix}, err
		}
	}
	var p *signature.Provenance
	var verr error
	if root != "" {
		p, verr = kr.Root(ctx, root, trust, time.Now()).Verify(ctx, dir)
	} else {
		p, verr = kr.Verify(ctx, dir, trust, time.Now())
	}
	return &SignatureCheck{Verdict: NewSignatureVerdict(p, verr), Err: verr}, nil
}
