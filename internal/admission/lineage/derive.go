package lineage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/platform/plural"
)

// MinScore is the similarity from which a skill is reported as derived
// from its nearest reference: below it, two skills share boilerplate, not
// an ancestor.
const MinScore = 0.5

// maxDiffBytes bounds one changed file's unified diff as reported.
const maxDiffBytes = 64 << 10

// Derivation is what a candidate changed from the reference it is derived
// from.
type Derivation struct {
	// From is the reference's name; Origin where it came from; Trusted
	// whether its identical files are left out of layer 4's findings.
	From    string `json:"from"`
	Origin  string `json:"origin,omitempty"`
	Trusted bool   `json:"trusted,omitempty"`
	// Score is Nearest's similarity (0 … 1).
	Score float64 `json:"score"`
	// Identical, Added and Removed are paths, sorted; Changed the files
	// present in both that differ.
	Identical []string      `json:"identical"`
	Changed   []ChangedFile `json:"changed"`
	Added     []string      `json:"added"`
	Removed   []string      `json:"removed"`
}

// ChangedFile is one file the candidate changed.
type ChangedFile struct {
	Path string `json:"path"`
	// Diff is the unified diff, reference (a/) to candidate (b/), cut at
	// 64 KiB (Truncated then says so).
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated,omitempty"`
	// AddedLines are the candidate's added or changed lines, 1-based.
	AddedLines []int `json:"added_lines"`
	// Replaced says the two versions were too far apart to diff line by
	// line: every line of the candidate counts as added.
	Replaced bool `json:"replaced,omitempty"`
}

// Summary is the one-line account: "derived from X: N files identical, M
// changed, K added, R removed".
func (d *Derivation) Summary() string {
	s := fmt.Sprintf("derived from %s: %d %s identical, %d changed, %d added", d.From,
		len(d.Identical), plural.Noun(len(d.Identical), "file", "files"), len(d.Changed), len(d.Added))
	if len(d.Removed) > 0 {
		s += fmt.Sprintf(", %d removed", len(d.Removed))
	}
	return s
}

// IsIdentical reports whether the candidate's file p is identical to the
// reference's.
func (d *Derivation) IsIdentical(p string) bool {
	_, ok := slices.BinarySearch(d.Identical, p)
	return ok
}

// Compare compares the candidate files with the reference's files refFiles
// (both whole, as ReadDir returns them) and returns the derivation from
// ref.
func Compare(ref Reference, refFiles, files Files) *Derivation {
	d := &Derivation{From: ref.Name, Origin: ref.Origin, Trusted: ref.Trusted,
		Identical: []string{}, Changed: []ChangedFile{}, Added: []string{}, Removed: []string{}}
	for _, p := range sortedPaths(files) {
		old, ok := refFiles[p]
		switch {
		case !ok:
			d.Added = append(d.Added, p)
		case bytes.Equal(old, files[p]):
			d.Identical = append(d.Identical, p)
		default:
			c := ChangedFile{Path: p}
			if isText(old) && isText(files[p]) {
				c.Diff, c.AddedLines, c.Replaced = lineDiff(p, string(old), string(files[p]))
			} else {
				c.Diff, c.Replaced = fmt.Sprintf("binary files a/%s and b/%s differ\n", p, p), true
			}
			if len(c.Diff) > maxDiffBytes {
				c.Diff, c.Truncated = c.Diff[:maxDiffBytes], true
			}
			d.Changed = append(d.Changed, c)
		}
	}
	for _, p := range sortedPaths(refFiles) {
		if _, ok := files[p]; !ok {
			d.Removed = append(d.Removed, p)
		}
	}
	return d
}

// Derive finds files' nearest reference and, when it scores at least
// MinScore, compares them, reading the reference's files from its Root.
// It returns nil and no error when no reference is close enough.
func (ix *Index) Derive(files Files, exclude ...string) (*Derivation, error) {
	best := ix.Nearest(files, 1, exclude...)
	if len(best) == 0 || best[0].Score < MinScore {
		return nil, nil
	}
	ref, ok := ix.Reference(best[0].Name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknown, best[0].Name)
	}
	refFiles, err := ReadDir(ref.Root, ix.limits)
	if err != nil {
		return nil, fmt.Errorf("lineage: reading reference %s: %w", ref.Name, err)
	}
	if ix.Version(refFiles) != ref.Version {
		// The reference changed on disk since it was indexed: re-index it
		// and compare with what is there now.
		if _, err := ix.Add(ref, refFiles); err != nil {
			return nil, err
		}
	}
	d := Compare(ref, refFiles, files)
	d.Score = best[0].Score
	return d, nil
}

// ReadDir reads the regular files under root (not following links, not
// descending into .git), bounded by l's MaxFiles and MaxBytes; a file
// larger than MaxFileBytes is read whole only while MaxBytes allows.
func ReadDir(root string, l Limits) (Files, error) {
	l = l.withDefaults()
	out := Files{}
	var total int64
	fsys := os.DirFS(root)
	err := fs.WalkDir(fsys, ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			if p != "." && (de.Name() == ".git" || de.Name() == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if !de.Type().IsRegular() {
			return nil
		}
		if len(out) >= l.MaxFiles {
			return fs.SkipAll
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		if total+info.Size() > l.MaxBytes {
			return fs.SkipAll
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		total += int64(len(data))
		out[path.Clean(p)] = data
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return nil, err
	}
	return out, nil
}

// isText reports whether data looks like text: valid UTF-8 without NUL in
// its first 8 KiB.
func isText(data []byte) bool {
	head := data[:min(len(data), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n == 1 && len(head) >= utf8.UTFMax {
			return false
		}
		head = head[n:]
	}
	return true
}

func sortedPaths(f Files) []string {
	out := make([]string, 0, len(f))
	for p := range f {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
