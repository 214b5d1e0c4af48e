package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// streamBatch is how many parsed skills record hands to the store at once.
const streamBatch = 64

// streamAhead is how many batches the parse may run ahead of the store.
const streamAhead = 8

// parseAll parses and hashes changed candidates on a worker pool, keeping
// their order. Each candidate of cs is cleared once parsed (what the rest
// of a scan needs of it is in its version): the file lists of 100,000
// candidates would otherwise stay live through the parse. When write is not nil it is given the results in order, in
// batches of streamBatch, from the calling goroutine while the workers
// parse on; parseAll returns once every batch was written. A write error
// stops the parse. parsed is when the last candidate was parsed.
func (r *Registry) parseAll(ctx context.Context, root string, cs []discover.Candidate, checks rootChecks, progress Progress, write func([]store.Version) error) (out []store.Version, parsed time.Time, err error) {
	out = make([]store.Version, len(cs))
	if len(cs) == 0 {
		return out, time.Now(), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// ready[b] is closed when batch b is parsed; left[b] counts down to it.
	nb := (len(cs) + streamBatch - 1) / streamBatch
	ready := make([]chan struct{}, nb)
	left := make([]atomic.Int32, nb)
	for b := range ready {
		ready[b] = make(chan struct{})
		left[b].Store(int32(min(streamBatch, len(cs)-b*streamBatch)))
	}
	trees := discover.OpenTrees(root)
	defer trees.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var next atomic.Int64
	var done int
	// When the results are written as they come, the workers parse at most
	// streamAhead batches ahead of the writer: the single-threaded index
	// writes are the slower side, and parsed skills waiting for them were
	// most of a large scan's live heap. Candidates are taken in order, so
	// the batch the writer waits for always gets its tokens.
	var ahead chan struct{}
	if write != nil {
		ahead = make(chan struct{}, streamAhead*streamBatch)
	}
	for w := 0; w < r.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if ahead != nil {
					select {
					case ahead <- struct{}{}:
					case <-ctx.Done():
						return
					}
				}
				i := int(next.Add(1)) - 1
				if i >= len(cs) || ctx.Err() != nil {
					return
				}
				var sig *candidateCheck
				if checks.sigs != nil {
					sig = &candidateCheck{sigs: checks.sigs, data: checks.evidence[i]}
					checks.evidence[i] = nil
				}
				v, err := parseCandidate(ctx, trees, root, cs[i], sig)
				out[i] = v
				cs[i] = discover.Candidate{}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				done++
				if done == len(cs) {
					parsed = time.Now()
				}
				if done%256 == 0 || done == len(cs) {
					progress("parse", done, len(cs))
				}
				mu.Unlock()
				if left[i/streamBatch].Add(-1) == 0 {
					close(ready[i/streamBatch])
				}
			}
		}()
	}
	var werr error
	if write != nil {
		for b := 0; b < nb && werr == nil; b++ {
			select {
			case <-ready[b]:
				batch := out[b*streamBatch : min((b+1)*streamBatch, len(cs))]
				werr = write(batch)
				for range batch {
					<-ahead
				}
			case <-ctx.Done():
				werr = ctx.Err()
			}
		}
		if werr != nil {
			cancel()
		}
	}
	wg.Wait()
	if werr != nil {
		// Workers stopped by the cancel report it; the write error is why.
		return out, parsed, werr
	}
	return out, parsed, firstErr
}

// parseCandidate validates one skill leniently and hashes its tree. A bad
// skill is not an error: it is recorded as rejected with its reasons. The
// skill directory is opened as an [os.Root], so no read can leave it even if
// the tree changes under the scan.
func parseCandidate(ctx context.Context, trees *discover.Trees, root string, c discover.Candidate, check *candidateCheck) (store.Version, error) {
	v := store.Version{Root: root, Dir: c.Dir, Rel: c.Rel, File: c.Dir + string(os.PathSeparator) + c.FileName, Fingerprint: c.Fingerprint, Category: c.Category}
	if err := ctx.Err(); err != nil {
		return v, err
	}
	opts := skill.Options{Mode: skill.Lenient, Category: c.Category, SkipBody: true}
	s, err := loadCandidate(ctx, trees, c, filepath.Base(c.Dir), opts, check)
	if err != nil {
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
		s = &skill.Skill{Category: c.Category, Tier: skill.DefaultTier}
		s.Diagnostics = []skill.Diagnostic{{Severity: skill.SeverityError, Message: err.Error()}}
	}
	fillVersion(&v, s, c)
	return v, nil
}

// candidateCheck is the signature check of one skill: its root's checks
// and what they read of it (RootSignatures.Evidence).
type candidateCheck struct {
	sigs RootSignatures
	data []byte
}

// signatureFingerprints mixes into the fingerprint of each skill of a
// first_party root what its signature check depends on besides its files
// (RootSignatures.Evidence): a skill signed, re-signed or unsigned, its
// root's index changed, or a key added, revoked or expired, is then a
// changed skill, checked again. It returns what Evidence read of each
// candidate, for its check. A skill the root's index lists costs no read;
// any other, a read of its signature file (about a kilobyte). Many
// candidates are shared among workers goroutines.
func signatureFingerprints(ctx context.Context, sigs RootSignatures, cs []discover.Candidate, workers int) [][]byte {
	data := make([][]byte, len(cs))
	one := func(i int) {
		c := &cs[i]
		fp, b := sigs.Evidence(ctx, c.Rel, c.Dir)
		h := sha256.New()
		h.Write([]byte(c.Fingerprint))
		h.Write([]byte{0})
		h.Write([]byte(fp))
		h.Write([]byte{0})
		h.Write(b)
		c.Fingerprint = hex.EncodeToString(h.Sum(nil)[:16])
		data[i] = b
	}
	if len(cs) < 256 || workers < 2 {
		for i := range cs {
			one(i)
		}
		return data
	}
	var wg sync.WaitGroup
	per := (len(cs) + workers - 1) / workers
	for start := 0; start < len(cs); start += per {
		end := min(start+per, len(cs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := start; i < end; i++ {
				one(i)
			}
		}()
	}
	wg.Wait()
	return data
}

// readListed reads the skill file, whose size the walk listed (else stat
// says): exactly that many bytes in one read. A file over
// skill.MaxFileBytes is not read: the error, skill.FileTooLarge, names its
// size and the bound. buf, when large enough, holds the content.
func readListed(f fs.File, c discover.Candidate, buf []byte) ([]byte, error) {
	size := int64(-1)
	for _, fl := range c.Files {
		if fl.Path == c.FileName {
			size = fl.Size
		}
	}
	if size < 0 {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		size = fi.Size()
	}
	if size > skill.MaxFileBytes {
		return nil, skill.FileTooLarge(c.FileName, size)
	}
	b := buf[:0]
	if int64(cap(b)) < size {
		b = make([]byte, size)
	}
	b = b[:size]
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("file changed while being read: %w; scan again", err)
	}
	return b, nil
}

// contentBufs hold SKILL.md files while they are parsed and hashed.
var contentBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// loadCandidate reads, parses and hashes one candidate.
// The name is checked against dirName (the directory's own name, but for
// managed storage).
func loadCandidate(ctx context.Context, trees *discover.Trees, c discover.Candidate, dirName string, opts skill.Options, check *candidateCheck) (*skill.Skill, error) {
	if c.Problem != "" {
		return nil, errors.New(c.Problem)
	}
	tree, err := trees.Open(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", c.Dir, err)
	}
	defer tree.Close()
	f, err := tree.Open(c.FileName)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", c.FileName, err)
	}
	// Nothing keeps content after this function (Parse copies what it
	// keeps), so its buffer is reused.
	bp := contentBufs.Get().(*[]byte)
	defer contentBufs.Put(bp)
	content, err := readListed(f, c, *bp)
	f.Close()
	if errors.Is(err, skill.ErrTooLarge) { // rejected, with the reason, as Parse rejects
		s := &skill.Skill{Dir: c.Dir, File: filepath.Join(c.Dir, c.FileName)}
		s.Diagnostics = []skill.Diagnostic{{Severity: skill.SeverityError, Message: err.Error()}}
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", c.FileName, err)
	}
	s := skill.Parse(content, dirName, opts)
	s.Dir, s.File = c.Dir, filepath.Join(c.Dir, c.FileName)
	if !s.Valid() {
		return s, nil
	}
	d, err := skill.DigestFiles(ctx, tree, c.Files, c.FileName, content)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.Diagnostics = append(s.Diagnostics, skill.Diagnostic{Severity: skill.SeverityError, Message: "cannot hash the skill tree: " + err.Error()})
	}
	s.Digest = d
	if check != nil && err == nil {
		if err := check.sigs.Check(ctx, tree, c.Rel, check.data, s.Name, d, c.Files); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.Diagnostics = append(s.Diagnostics, skill.Diagnostic{Severity: skill.SeverityError, Message: "signature: " + err.Error()})
		}
	}
	return s, nil
}

func fillVersion(v *store.Version, s *skill.Skill, c discover.Candidate) {
	v.Name, v.Description, v.Version, v.Tier, v.Category = s.Name, s.Description, s.Version, s.Tier, s.Category
	for _, t := range s.InvokableBy {
		v.InvokableBy = append(v.InvokableBy, string(t))
	}
	v.Valid = s.Valid()
	v.Digest = s.Digest
	v.Key = s.ID()
	if s.Name == "" || !v.Valid {
		// A rejected skill keeps a key that cannot collide with a valid one.
		v.Key = "!" + c.Rel
	}
	if s.Frontmatter != nil {
		v.Frontmatter, _ = s.Frontmatter.MarshalJSON()
	}
	v.Diagnostics = json.RawMessage("[]")
	if len(s.Diagnostics) > 0 {
		v.Diagnostics, _ = json.Marshal(s.Diagnostics)
	}
	v.Files = filesJSON(c.Files)
}

// filesJSON writes files as the JSON list [{"path":…,"size":…,"digest":…},…],
// as encoding/json writes it (digest, each file's own SHA-256, only when
// recorded).
func filesJSON(files []skill.File) json.RawMessage {
	n := 2
	for _, f := range files {
		n += len(f.Path) + 32 + len(f.Digest) + 12
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, f := range files {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		if jsonscan.Plain(f.Path) {
			b = append(b, '"')
			b = append(b, f.Path...)
			b = append(b, '"')
		} else {
			p, _ := json.Marshal(f.Path)
			b = append(b, p...)
		}
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, f.Size, 10)
		if f.Digest != "" {
			b = append(b, `,"digest":"`...)
			b = append(b, f.Digest...) // "sha256:" and hex: plain
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
