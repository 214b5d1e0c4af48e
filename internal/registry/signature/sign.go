package signature

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/atomicfile"
	"github.com/skillgate/skillgate/internal/registry/discover"
)

// FileName is the signature file in a skill directory. It is a dot file:
// scans, digests, agents' file trees and installs leave it out, so a
// signature never changes the digest it signs.
const FileName = ".skillgate.dsse.json"

// ManifestFile is the shipped manifest whose digest a signature records.
const ManifestFile = "manifest.json"

// PayloadType is the DSSE payload type of a signature: an in-toto
// Statement.
const PayloadType = "application/vnd.in-toto+json"

// PredicateType names skillgate's predicate in the Statement.
const PredicateType = "https://skillgate.dev/attestation/skill-signature/v1"

// Bounds on what a signature may hold.
const (
	// MaxEnvelopeBytes bounds the signature file.
	MaxEnvelopeBytes = 64 << 10
	// MaxSignatures bounds the signatures of one envelope.
	MaxSignatures = 4
	// maxManifestBytes bounds manifest.json when it is hashed.
	maxManifestBytes = 16 << 20
)

// The trust tiers a skill may be signed for: capability.Trust's, as the
// strings a predicate and configuration carry.
const (
	TrustFirstParty = string(capability.TrustFirstParty)
	TrustImported   = string(capability.TrustImported)
)

// Predicate is what a signature says about the skill besides its digest.
type Predicate struct {
	// Skill is the skill's name, from its SKILL.md.
	Skill string `json:"skill"`
	// Signer names who signed: the key's name, or a person's.
	Signer string `json:"signer"`
	// KeyID is the signing key's identifier ([KeyID]).
	KeyID string `json:"keyId"`
	// SignedAt is when the signature was made, in UTC.
	SignedAt time.Time `json:"signedAt"`
	// Trust is the tier the skill is signed for.
	Trust string `json:"trust"`
	// ManifestDigest is "sha256:<hex>" of the shipped manifest.json, for a
	// skill with capabilities; empty without one.
	ManifestDigest string `json:"manifestDigest,omitempty"`
}

// SignOptions says who signs and for which tier.
type SignOptions struct {
	// Signer names who signs; required.
	Signer string
	// Trust is TrustFirstParty (the default) or TrustImported.
	Trust string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Signed is the outcome of [Sign].
type Signed struct {
	// Path is the signature file written.
	Path string
	// Digest is the content digest signed.
	Digest string
	// Predicate is what the signature says besides the digest.
	Predicate Predicate
}

// Sign signs the skill in dir with priv and writes the envelope to
// dir/[FileName], replacing any earlier one. The digest signed is the one
// a scan of dir computes ([Digest]).
func Sign(ctx context.Context, dir string, priv ed25519.PrivateKey, opts SignOptions) (*Signed, error) {
	who, trust, now, err := opts.check()
	if err != nil {
		return nil, err
	}
	id, err := signerID(priv)
	if err != nil {
		return nil, err
	}
	sub, err := subjectOf(ctx, dir)
	if err != nil {
		return nil, err
	}
	p := Predicate{Skill: sub.Name, Signer: who, KeyID: id, SignedAt: now().UTC().Truncate(time.Second), Trust: trust, ManifestDigest: sub.ManifestDigest}
	payload, err := statement(sub.Digest, p)
	if err != nil {
		return nil, err
	}
	es, err := dsse.NewEnvelopeSigner(signer{priv: priv, id: id})
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	env, err := es.SignPayload(ctx, PayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	out, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	path := filepath.Join(dir, FileName)
	if err := atomicfile.Write(path, append(out, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return &Signed{Path: path, Digest: sub.Digest, Predicate: p}, nil
}

// statement encodes the in-toto Statement v1 of digest with predicate p.
func statement(digest string, p Predicate) ([]byte, error) {
	return encodeStatement([]Subject{{Name: p.Skill, Digest: digest}}, PredicateType, p)
}

// encodeStatement encodes an in-toto Statement v1 of subjects subs (each
// digest written sha256:<hex>) with predicate p of type predicateType.
func encodeStatement(subs []Subject, predicateType string, p any) ([]byte, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	pred, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("sign: predicate: %w", err)
	}
	st := &v1.Statement{Type: v1.StatementTypeUri, PredicateType: predicateType, Predicate: pred}
	st.Subject = make([]*v1.ResourceDescriptor, len(subs))
	for i, s := range subs {
		hexDigest, ok := strings.CutPrefix(s.Digest, "sha256:")
		if !ok {
			return nil, fmt.Errorf("sign: digest %q is not sha256:<hex>", s.Digest)
		}
		st.Subject[i] = &v1.ResourceDescriptor{Name: s.Name, Digest: map[string]string{"sha256": hexDigest}}
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("sign: statement: %w", err)
	}
	return protojson.Marshal(st)
}

// Digest returns the content digest a scan records for the skill whose
// SKILL.md is in dir, and the skill's name: the same files (what a tree
// leaves out, nested skills, links never followed) and the same hash.
func Digest(ctx context.Context, dir string) (digest, name string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	content, file, err := skill.ReadFile(abs)
	switch {
	case file == "":
		return "", "", fmt.Errorf("%s holds no SKILL.md: give the directory of one skill", dir)
	case err != nil:
		return "", "", fmt.Errorf("%s: %w", dir, err)
	}
	s := skill.Parse(content, filepath.Base(abs), skill.Options{})
	if s.Name == "" || !s.Valid() {
		return "", "", fmt.Errorf("%s: %s is not a valid skill (see skillgate validate %s)", dir, file, dir)
	}
	d, err := discover.TreeDigest(ctx, abs)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", dir, err)
	}
	return d, s.Name, nil
}

// subjectOf is what the skill in dir is now: its name, content digest and
// manifest.json's digest.
func subjectOf(ctx context.Context, dir string) (Subject, error) {
	digest, name, err := Digest(ctx, dir)
	if err != nil {
		return Subject{}, err
	}
	md, err := manifestDigest(dir)
	if err != nil {
		return Subject{}, err
	}
	return Subject{Name: name, Digest: digest, ManifestDigest: md}, nil
}

// manifestDigest returns "sha256:<hex>" of dir/manifest.json, or "" when
// there is none.
func manifestDigest(dir string) (string, error) {
	p := filepath.Join(dir, ManifestFile)
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	if fi.Size() > maxManifestBytes {
		return "", fmt.Errorf("%s is larger than %d bytes", p, maxManifestBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// signerID checks that priv is an Ed25519 private key and returns the id
// of its public key, which a signature names.
func signerID(priv ed25519.PrivateKey) (string, error) {
	pub, ok := priv.Public().(ed25519.PublicKey)
	if !ok || len(priv) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("sign: %w: not an Ed25519 private key", ErrKey)
	}
	return KeyID(pub)
}
