package signature

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/atomicfile"
	"github.com/skillgate/skillgate/internal/registry/discover"
)

// IndexFileName is a root's signed index: one envelope whose statement
// has a subject for every skill under the root. It is a dot file at the
// root, so no skill's digest includes it (not even a skill at the root
// itself), agents never see it and installs never copy it.
const IndexFileName = ".skillgate-index.dsse.json"

// IndexPredicateType names skillgate's index predicate in the Statement.
const IndexPredicateType = "https://skillgate.dev/attestation/skill-index/v1"

// Bounds on what a signed index may hold: an index is read from the root,
// which is outside input.
const (
	// MaxIndexBytes bounds the index file: about 180 bytes per skill
	// (more with a manifest.json), so 64 MiB holds a few hundred
	// thousand skills.
	MaxIndexBytes = 64 << 20
	// MaxIndexSubjects bounds the skills one index may list.
	MaxIndexSubjects = 200_000
)

// IndexPredicate is what a signed index says besides the skills' digests:
// the same as a skill's [Predicate], once for all of the root's skills.
type IndexPredicate struct {
	// Signer names who signed: the key's name, or a person's.
	Signer string `json:"signer"`
	// KeyID is the signing key's identifier ([KeyID]).
	KeyID string `json:"keyId"`
	// SignedAt is when the index was signed, in UTC.
	SignedAt time.Time `json:"signedAt"`
	// Trust is the tier the skills are signed for.
	Trust string `json:"trust"`
	// Manifests maps a subject's name (the skill's path relative to the
	// root) to "sha256:<hex>" of its shipped manifest.json, for the
	// skills that have one.
	Manifests map[string]string `json:"manifests,omitempty"`
}

// IndexOptions says who signs a root and how far its walk may go.
type IndexOptions struct {
	SignOptions
	// Limits bound the walk of the root, as a scan's do; zero means
	// discover.DefaultLimits. A walk that stops at a bound is an error:
	// an index never leaves out part of a root silently.
	Limits discover.Limits
}

// SignedIndex is the outcome of [SignRoot].
type SignedIndex struct {
	// Path is the index file written.
	Path string `json:"path"`
	// Skills is how many skills it lists.
	Skills int `json:"skills"`
	// Skipped are the skills it does not list: invalid ones cannot be
	// signed.
	Skipped []SkippedSkill `json:"skipped"`
	// Predicate is what the index says besides the digests.
	Predicate IndexPredicate `json:"predicate"`
}

// SkippedSkill is a skill [SignRoot] left out, with why.
type SkippedSkill struct {
	Rel    string `json:"rel"`
	Reason string `json:"reason"`
}

// SignRoot signs every skill under root with priv in one index, written to
// root/[IndexFileName] (replacing any earlier one). Each skill is a
// subject named by its path relative to the root ("." for a skill at the
// root itself), with the content digest a scan computes. Invalid skills
// are left out and listed in Skipped. A root with no valid skill, or whose
// walk stops at a bound, is an error.
func SignRoot(ctx context.Context, root string, priv ed25519.PrivateKey, opts IndexOptions) (*SignedIndex, error) {
	who, trust, now, err := opts.SignOptions.check()
	if err != nil {
		return nil, err
	}
	id, err := signerID(priv)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	lim := opts.Limits
	if lim == (discover.Limits{}) {
		lim = discover.DefaultLimits
	}
	res, err := discover.Walk(ctx, discover.Root{Path: abs}, lim)
	switch {
	case err != nil:
		return nil, fmt.Errorf("sign: %w", err)
	case res.Missing:
		return nil, fmt.Errorf("sign: %s does not exist", root)
	case res.Truncated:
		return nil, fmt.Errorf("sign: the walk of %s stopped at a bound (%s): an index would leave skills out; raise --max-dirs or --max-depth", root, strings.Join(res.Notes, "; "))
	case len(res.Candidates) > MaxIndexSubjects:
		return nil, fmt.Errorf("sign: %s holds %d skills, an index lists at most %d; sign its subdirectories as roots of their own", root, len(res.Candidates), MaxIndexSubjects)
	}
	subs, skipped, err := digestRoot(ctx, abs, res.Candidates)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("sign: %s holds no valid skill to sign", root)
	}
	p := IndexPredicate{Signer: who, KeyID: id, SignedAt: now().UTC().Truncate(time.Second), Trust: trust}
	for _, s := range subs {
		if s.ManifestDigest != "" {
			if p.Manifests == nil {
				p.Manifests = map[string]string{}
			}
			p.Manifests[s.Name] = s.ManifestDigest
		}
	}
	payload, err := indexStatement(subs, p)
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
	out, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if len(out) >= MaxIndexBytes {
		return nil, fmt.Errorf("sign: the index of %s would be %d bytes, at most %d are read; sign its subdirectories as roots of their own", root, len(out), MaxIndexBytes)
	}
	p2 := filepath.Join(abs, IndexFileName)
	if err := atomicfile.Write(p2, append(out, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if skipped == nil {
		skipped = []SkippedSkill{}
	}
	return &SignedIndex{Path: p2, Skills: len(subs), Skipped: skipped, Predicate: p}, nil
}

// check validates the options shared by [Sign] and [SignRoot] and returns
// the signer, the tier and the clock.
func (o SignOptions) check() (string, string, func() time.Time, error) {
	if strings.TrimSpace(o.Signer) == "" || len(o.Signer) > 256 || strings.ContainsAny(o.Signer, "\n\r\x00") {
		return "", "", nil, errors.New("sign: the signer must be a name of one line, at most 256 bytes")
	}
	trust := o.Trust
	if trust == "" {
		trust = TrustFirstParty
	}
	if trust != TrustFirstParty && trust != TrustImported {
		return "", "", nil, fmt.Errorf("sign: trust %q: use %s or %s", trust, TrustFirstParty, TrustImported)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return o.Signer, trust, now, nil
}

// digestRoot computes, on a worker per CPU, the subject of every valid
// candidate, named by its path relative to the root, sorted by name.
func digestRoot(ctx context.Context, root string, cs []discover.Candidate) ([]Subject, []SkippedSkill, error) {
	trees := discover.OpenTrees(root)
	defer trees.Close()
	subs := make([]Subject, len(cs))
	why := make([]string, len(cs))
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				subs[i], why[i], errs[i] = candidateSubject(ctx, trees, cs[i])
			}
		}()
	}
	for i := range cs {
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var out []Subject
	var skipped []SkippedSkill
	for i := range cs {
		switch {
		case errs[i] != nil:
			return nil, nil, fmt.Errorf("%s: %w", cs[i].Dir, errs[i])
		case why[i] != "":
			skipped = append(skipped, SkippedSkill{Rel: cs[i].Rel, Reason: why[i]})
		default:
			out = append(out, subs[i])
		}
	}
	slices.SortFunc(out, func(a, b Subject) int { return strings.Compare(a.Name, b.Name) })
	return out, skipped, nil
}

// candidateSubject is what a scan computes of c: its content digest and
// its manifest.json's, named by c.Rel. why says why a skill that cannot be
// signed (invalid, unreadable) is left out.
func candidateSubject(ctx context.Context, trees *discover.Trees, c discover.Candidate) (sub Subject, why string, err error) {
	if c.Problem != "" {
		return Subject{}, c.Problem, nil
	}
	if reason := subjectNameProblem(c.Rel); reason != "" {
		return Subject{}, "its path " + reason, nil
	}
	tree, err := trees.Open(c.Dir)
	if err != nil {
		return Subject{}, "", err
	}
	defer tree.Close()
	content, err := readFS(tree, c.FileName, skill.MaxFileBytes)
	if err != nil {
		return Subject{}, "", err
	}
	s := skill.Parse(content, filepath.Base(c.Dir), skill.Options{Category: c.Category, SkipBody: true})
	if s.Name == "" || !s.Valid() {
		return Subject{}, fmt.Sprintf("%s is not a valid skill (see skillgate validate %s)", c.FileName, c.Dir), nil
	}
	d, err := skill.DigestFiles(ctx, tree, c.Files, c.FileName, content)
	if err != nil {
		return Subject{}, "", err
	}
	return Subject{Name: c.Rel, Digest: d, ManifestDigest: listedManifest(c.Files)}, "", nil
}

// listedManifest is the digest of manifest.json among files, whose
// digests [skill.DigestFiles] recorded, or "" when the tree has none.
func listedManifest(files []skill.File) string {
	i, ok := slices.BinarySearchFunc(files, ManifestFile, func(f skill.File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return ""
	}
	return files[i].Digest
}

// indexStatement encodes the in-toto Statement v1 of subs with predicate p.
func indexStatement(subs []Subject, p IndexPredicate) ([]byte, error) {
	return encodeStatement(subs, IndexPredicateType, p)
}

// Index is a signed index whose signature verified: which skills of the
// root it vouches for, by whom.
type Index struct {
	// KeyName and KeyID name the trusted key that signed.
	KeyName string
	KeyID   string
	// Predicate is what the index says besides the digests.
	Predicate IndexPredicate
	// entries are the subjects, by name.
	entries map[string]indexEntry
}

// indexEntry is what an index says of one skill.
type indexEntry struct {
	digest, manifest string
}

// Len is how many skills the index lists.
func (ix *Index) Len() int { return len(ix.entries) }

// Lists reports whether the index has a subject named rel.
func (ix *Index) Lists(rel string) bool {
	_, ok := ix.entries[rel]
	return ok
}

// Check compares what the index says of the skill at rel with what it is
// now (want's digest and manifest digest; want.Name, the skill's name, is
// recorded in the provenance). It returns [ErrUnsigned] when the index
// does not list rel, [ErrModified] when it lists other content.
func (ix *Index) Check(rel string, want Subject) (*Provenance, error) {
	e, err := ix.match(rel, want)
	if err != nil {
		return nil, err
	}
	p := ix.Predicate
	return &Provenance{Digest: e.digest, KeyName: ix.KeyName, KeyID: ix.KeyID,
		Predicate: Predicate{Skill: want.Name, Signer: p.Signer, KeyID: p.KeyID, SignedAt: p.SignedAt, Trust: p.Trust, ManifestDigest: e.manifest}}, nil
}

// match is Check without the provenance: what a scan needs of each skill.
func (ix *Index) match(rel string, want Subject) (indexEntry, error) {
	e, ok := ix.entries[rel]
	switch {
	case !ok:
		return e, fmt.Errorf("%w: the index does not list %s", ErrUnsigned, printable(rel))
	case e.digest != want.Digest:
		return e, fmt.Errorf("%w: %s is now %s, the index signed %s", ErrModified, rel, want.Digest, e.digest)
	case e.manifest != want.ManifestDigest:
		return e, fmt.Errorf("%w: the manifest.json of %s is %s, the index signed %s", ErrModified, rel, orNone(want.ManifestDigest), orNone(e.manifest))
	}
	return e, nil
}

// VerifyIndex checks a signed index read from a root's [IndexFileName] for
// tier trust at time now: a well-formed envelope of at most
// [MaxIndexBytes], signed by a key trusted for that tier, current and not
// revoked, over a statement of skillgate's index predicate signed for
// trust, whose subjects (at most [MaxIndexSubjects]) are distinct, clean
// paths relative to the root with SHA-256 digests. Its errors wrap the
// reasons [Keyring.Verify] uses and do not name the file: the caller does.
func (k *Keyring) VerifyIndex(ctx context.Context, data []byte, trust string, now time.Time) (*Index, error) {
	return k.verifyIndex(ctx, data, trust, now, againRoot)
}

// verifyIndex is VerifyIndex; again is the fix its errors give.
func (k *Keyring) verifyIndex(ctx context.Context, data []byte, trust string, now time.Time, again fix) (*Index, error) {
	e, err := decodeEnvelope(data, MaxIndexBytes, again)
	if err != nil {
		return nil, err
	}
	body, key, err := k.verifySignatures(ctx, e, trust, now, again)
	if err != nil {
		return nil, err
	}
	ix, err := parseIndexStatement(body, again)
	if err != nil {
		return nil, err
	}
	switch {
	case ix.Predicate.KeyID != key.id:
		return nil, fmt.Errorf("%w: the predicate names key %s, the signature is by %s; %s", ErrMalformed, printable(ix.Predicate.KeyID), key.Name, again)
	case ix.Predicate.Trust != trust:
		return nil, fmt.Errorf("%w: signed for %s, served as %s; %s", ErrUntrustedKey, printable(ix.Predicate.Trust), trust, again)
	}
	ix.KeyName, ix.KeyID = key.Name, key.id
	return ix, nil
}
