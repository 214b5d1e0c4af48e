package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/in-toto/attestation/go/v1"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

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
