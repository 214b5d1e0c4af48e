package signature

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/skillgate/skillgate/discover"
	"github.com/skillgate/skillgate/internal/fileinfo"
	"github.com/skillgate/skillgate/internal/strictjson"
	"github.com/skillgate/skillgate/skill"
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
	// MaxIndexBytes bounds the index file: about 150 bytes per skill
	// (more with a manifest.json), so 64 MiB holds a few hundred
	// thousand skills.
	MaxIndexBytes = 64 << 20
	// MaxIndexSubjects bounds the skills one index may list.
	MaxIndexSubjects = 200_000
	// maxIndexDepth bounds the nesting of the envelope and the statement
	// (the deepest is subject[i].digest.sha256: 4).
	maxIndexDepth = 6
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
	pub, ok := priv.Public().(ed25519.PublicKey)
	if !ok || len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("sign: %w: not an Ed25519 private key", ErrKey)
	}
	id, err := KeyID(pub)
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
	if err := writeFileAtomic(p2, append(out, '\n')); err != nil {
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
	st := &v1.Statement{Type: v1.StatementTypeUri, PredicateType: IndexPredicateType, Predicate: pred}
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

// entryKey is a digest of what the index says of rel (nothing when it is
// not listed): a rescan's fingerprint of a listed skill.
func (ix *Index) entryKey(rel string) string {
	e, ok := ix.entries[rel]
	if !ok {
		return "not listed"
	}
	return ix.KeyID + "\x00" + ix.Predicate.Trust + "\x00" + e.digest + "\x00" + e.manifest
}

// Check compares what the index says of the skill at rel with what it is
// now (want's digest and manifest digest; want.Name, the skill's name, is
// recorded in the provenance). It returns [ErrUnsigned] when the index
// does not list rel, [ErrModified] when it lists other content.
func (ix *Index) Check(rel string, want Subject) (*Provenance, error) {
	e, ok := ix.entries[rel]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: the index does not list %s", ErrUnsigned, printable(rel))
	case e.digest != want.Digest:
		return nil, fmt.Errorf("%w: %s is now %s, the index signed %s", ErrModified, rel, want.Digest, e.digest)
	case e.manifest != want.ManifestDigest:
		return nil, fmt.Errorf("%w: the manifest.json of %s is %s, the index signed %s", ErrModified, rel, orNone(want.ManifestDigest), orNone(e.manifest))
	}
	p := ix.Predicate
	return &Provenance{Digest: e.digest, KeyName: ix.KeyName, KeyID: ix.KeyID,
		Predicate: Predicate{Skill: want.Name, Signer: p.Signer, KeyID: p.KeyID, SignedAt: p.SignedAt, Trust: p.Trust, ManifestDigest: e.manifest}}, nil
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

// parseIndexStatement reads a signed index's statement strictly (see
// [reader]): the Statement v1 fields and the predicate's only, every
// subject a distinct clean relative path with a SHA-256 digest, every
// manifest digest for a subject.
func parseIndexStatement(body []byte, again fix) (*Index, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s; %s", ErrMalformed, fmt.Sprintf(format, args...), again)
	}
	r, err := newReader(body)
	if err != nil {
		return nil, bad("not an in-toto statement (%v)", err)
	}
	var typ, predType string
	var pred *IndexPredicate
	var entries map[string]indexEntry
	subjects := 0
	top := fields{at: "statement"}
	err = r.object("statement", func(key string) error {
		if err := top.take(key, "_type", "subject", "predicateType", "predicate"); err != nil {
			return err
		}
		var err error
		switch key {
		case "_type":
			typ, err = r.string("_type")
		case "predicateType":
			predType, err = r.string("predicateType")
		case "predicate":
			pred, err = readIndexPredicate(r)
		case "subject":
			entries, subjects, err = readSubjects(r, bad)
		}
		return err
	})
	if err == nil {
		err = r.end()
	}
	var ie *indexError
	switch {
	case errors.As(err, &ie):
		return nil, ie.err
	case err != nil:
		return nil, bad("not an in-toto statement (%v)", err)
	case typ != v1.StatementTypeUri:
		return nil, bad("_type %s, expected %q", strictjson.Quote(typ, 128), v1.StatementTypeUri)
	case predType != IndexPredicateType:
		return nil, bad("predicateType %s, expected %q", strictjson.Quote(predType, 128), IndexPredicateType)
	case pred == nil:
		return nil, bad("no predicate")
	case subjects == 0:
		return nil, bad("no subject")
	}
	ix := &Index{Predicate: *pred, entries: entries}
	// In name order, so that the error about several bad entries is
	// always the same one.
	names := make([]string, 0, len(pred.Manifests))
	for n := range pred.Manifests {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		d := pred.Manifests[n]
		e, ok := ix.entries[n]
		if !ok {
			return nil, bad("predicate.manifests: %s is not a subject", strictjson.Quote(n, 128))
		}
		if h, ok := strings.CutPrefix(d, "sha256:"); !ok || !isHex64(h) {
			return nil, bad("predicate.manifests[%s]: %s is not sha256:<64 hexadecimal digits>", n, strictjson.Quote(d, 128))
		}
		e.manifest = d
		ix.entries[n] = e
	}
	ix.Predicate.Manifests = nil // held by the entries
	return ix, nil
}

// indexError is a problem with a well-formed index's content, already
// worded: it is reported as it is, not as a syntax error.
type indexError struct{ err error }

func (e *indexError) Error() string { return e.err.Error() }

// readSubjects reads the subject array: at most [MaxIndexSubjects] clean,
// distinct names, each with a SHA-256 digest and nothing else.
func readSubjects(r *reader, bad func(string, ...any) error) (map[string]indexEntry, int, error) {
	entries := map[string]indexEntry{}
	n := 0
	err := r.array("subject", func(i int) error {
		if i >= MaxIndexSubjects {
			return &indexError{bad("more than %d subjects", MaxIndexSubjects)}
		}
		n++
		var name, digest []byte
		var haveName, haveDigest bool
		err := r.object("subject", func(key string) error {
			switch {
			case key == "name" && !haveName:
				haveName = true
				var err error
				name, err = r.stringBytes("subject.name")
				return err
			case key == "digest" && !haveDigest:
				haveDigest = true
				var haveSHA bool
				return r.object("subject.digest", func(key string) error {
					if key != "sha256" || haveSHA {
						return &indexError{bad("subject[%d].digest: only one sha256 digest is allowed, found %s", i, strictjson.Quote(key, 64))}
					}
					haveSHA = true
					var err error
					digest, err = r.stringBytes("subject.digest.sha256")
					return err
				})
			case key == "name" || key == "digest":
				return &indexError{bad("subject[%d]: %v %q", i, strictjson.ErrDuplicateKey, key)}
			}
			return &indexError{bad("subject[%d]: %v %s", i, strictjson.ErrUnknownField, strictjson.Quote(key, 64))}
		})
		if err != nil {
			return err
		}
		nm := string(name)
		if reason := subjectNameProblem(nm); reason != "" {
			return &indexError{bad("subject[%d].name %s: %s", i, strictjson.Quote(nm, 128), reason)}
		}
		if !isHex64(string(digest)) {
			return &indexError{bad("subject[%d].digest.sha256 of %s: not 64 lower-case hexadecimal digits", i, nm)}
		}
		if _, dup := entries[nm]; dup {
			return &indexError{bad("subject[%d].name %s: listed twice", i, nm)}
		}
		entries[nm] = indexEntry{digest: "sha256:" + string(digest)}
		return nil
	})
	return entries, n, err
}

// readIndexPredicate reads the predicate object.
func readIndexPredicate(r *reader) (*IndexPredicate, error) {
	var p IndexPredicate
	f := fields{at: "predicate"}
	err := r.object("predicate", func(key string) error {
		if err := f.take(key, "signer", "keyId", "signedAt", "trust", "manifests"); err != nil {
			return err
		}
		var err error
		switch key {
		case "signer":
			p.Signer, err = r.string("predicate.signer")
		case "keyId":
			p.KeyID, err = r.string("predicate.keyId")
		case "trust":
			p.Trust, err = r.string("predicate.trust")
		case "signedAt":
			var s string
			if s, err = r.string("predicate.signedAt"); err == nil {
				if p.SignedAt, err = time.Parse(time.RFC3339, s); err != nil {
					err = fmt.Errorf("predicate.signedAt: %s is not an RFC 3339 time", strictjson.Quote(s, 64))
				}
			}
		case "manifests":
			p.Manifests = map[string]string{}
			err = r.object("predicate.manifests", func(key string) error {
				if _, dup := p.Manifests[key]; dup {
					return fmt.Errorf("predicate.manifests: %w %s", strictjson.ErrDuplicateKey, strictjson.Quote(key, 64))
				}
				v, err := r.string("predicate.manifests")
				p.Manifests[key] = v
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// subjectNameProblem says why name cannot name a skill under a root, or
// "" when it can: it must be "." or a clean slash-separated relative path
// ("pdf/pdf-tools") through directories a scan reads, in valid UTF-8
// without control characters.
func subjectNameProblem(name string) string {
	switch {
	case name == ".":
		return ""
	case name == "":
		return "empty"
	case strings.HasPrefix(name, "/"):
		return "an absolute path; name skills by their path relative to the root"
	case !fs.ValidPath(name) || path.Clean(name) != name:
		for _, el := range strings.Split(name, "/") {
			if el == ".." {
				return "a path that leaves the root"
			}
		}
		return "not a clean relative path (no empty, '.' or '..' elements, no trailing '/')"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }):
		return "a control character or a backslash"
	}
	for _, el := range strings.Split(name, "/") {
		if skill.Skip(el) {
			return fmt.Sprintf("element %q is a directory a scan never reads", el)
		}
	}
	return ""
}

// isHex64 reports whether s is 64 lower-case hexadecimal digits.
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// indexDigest is a short digest of an index file's bytes.
func indexDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// readIndexFile reads root/[IndexFileName]: a regular file (never a
// link), at most [MaxIndexBytes]. It returns nil, nil when there is none;
// again is the fix its errors give.
func readIndexFile(root string, again fix) ([]byte, error) {
	b, err := readRegular(filepath.Join(root, IndexFileName), MaxIndexBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w; %s", ErrMalformed, err, again)
	}
	return b, nil
}

// readRegular reads the regular file p, never through a link at its last
// element, refusing one of more than max bytes.
func readRegular(p string, max int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|fileinfo.OpenNoFollow|fileinfo.OpenNonblock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// O_NOFOLLOW on a link is ELOOP: say what it is.
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, errors.New("a symbolic link, not a regular file")
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	// Sized by the stat, so the read does not grow its buffer; a file
	// that grew meanwhile is read up to the bound, and refused past it.
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return buf.Bytes(), nil
}
