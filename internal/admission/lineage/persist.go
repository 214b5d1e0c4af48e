package lineage

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/skillgate/skillgate/internal/platform/atomicfile"
)

// FormatVersion is the persisted index's format; Load refuses another.
const FormatVersion = 1

// ErrFormat is returned by Load for a file of another format version or
// not an index at all: the caller rebuilds the index from its sources.
var ErrFormat = errors.New("lineage: not an index of this format")

// persisted is the file's content: a version, then the references (the
// inverted index is rebuilt on load).
type persisted struct {
	Format     int
	References []Reference
}

// Save writes the index to path in one step (atomicfile): a crash leaves
// the previous file or the new one.
func (ix *Index) Save(path string) error {
	ix.mu.RLock()
	p := persisted{Format: FormatVersion, References: make([]Reference, 0, len(ix.ids))}
	for _, e := range ix.refs {
		if e != nil {
			p.References = append(p.References, e.ref)
		}
	}
	ix.mu.RUnlock()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(p); err != nil {
		return fmt.Errorf("lineage: encoding index: %w", err)
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("lineage: writing index: %w", err)
	}
	return nil
}

// Load reads an index Save wrote, with limits l. A missing file is an
// empty index; a file of another format is ErrFormat.
func Load(path string, l Limits) (*Index, error) {
	ix := New(l)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lineage: reading index: %w", err)
	}
	var p persisted
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	if p.Format != FormatVersion {
		return nil, fmt.Errorf("%w: %s is format %d, want %d", ErrFormat, path, p.Format, FormatVersion)
	}
	for _, r := range p.References {
		if _, err := ix.AddPrinted(r); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// Sync makes the index hold the skill at root under ref.Name: when ref has
// a Stamp equal to the indexed one it reads nothing; otherwise it reads the
// files, and fingerprints them only when their version differs from the
// one indexed (the incremental rebuild after a restart). It reports
// whether the index changed.
func (ix *Index) Sync(ref Reference, root string) (bool, error) {
	if ref.Stamp != "" {
		ix.mu.Lock()
		if id, ok := ix.ids[ref.Name]; ok && ix.refs[id].ref.Stamp == ref.Stamp {
			e := ix.refs[id]
			changed := e.ref.Root != root || e.ref.Origin != ref.Origin || e.ref.Trusted != ref.Trusted
			e.ref.Root, e.ref.Origin, e.ref.Trusted = root, ref.Origin, ref.Trusted
			ix.mu.Unlock()
			return changed, nil
		}
		ix.mu.Unlock()
	}
	files, err := ReadDir(root, ix.limits)
	if err != nil {
		return false, fmt.Errorf("lineage: reading %s: %w", root, err)
	}
	ref.Root = root
	return ix.Add(ref, files)
}
