package install

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/admission/secscan"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// OriginApproved is the origin of a reference that is an approved
// install's managed tree.
const OriginApproved = "approved"

// deriveContent runs layer 4's lineage step on a scanned skill when the
// service has a reference index: it finds the reference the skill is
// derived from, records the derivation in scan, and applies it to the
// findings (secscan.ApplyLineage: identical files of a trusted reference
// not reported again, added lines of scripts read with SG950). A failure
// to read the skill or a reference is logged and leaves the scan as it
// was; an index that cannot be opened is an error (ErrStorage): a skill is
// never admitted unseen by lineage because of it.
func (s *Service) deriveContent(ctx context.Context, key, tree string, scan *manifest.ScanReport) error {
	if scan == nil {
		return nil
	}
	ix, err := s.references(ctx)
	if ix == nil || err != nil {
		return err
	}
	files, err := lineage.ReadDir(tree, ix.Limits())
	if err != nil {
		s.log.Warn("lineage: reading the skill", "skill", key, "err", err)
		return nil
	}
	// A recheck of a version that is itself a reference is not derived
	// from itself.
	var exclude []string
	if ref, ok := ix.Reference(key); ok && ref.Version == ix.Version(files) {
		exclude = append(exclude, key)
	}
	d, err := ix.Derive(files, exclude...)
	if err != nil {
		s.log.Warn("lineage: deriving", "skill", key, "err", err)
		return nil
	}
	if d == nil {
		return nil
	}
	scan.Lineage = d
	found := make([]secscan.Finding, len(scan.Findings))
	for i, f := range scan.Findings {
		found[i] = f.Finding
	}
	found = secscan.ApplyLineage(found, d, files, s.capabilities)
	scan.Findings = make([]manifest.ScanFinding, 0, len(found))
	for _, f := range found {
		scan.Findings = append(scan.Findings, manifest.ScanFinding{Finding: f})
	}
	return nil
}

// addReference makes the approved install in a trusted reference of the
// index, and saves the index when it changed. A failure is logged: the
// approval stands without it.
func (s *Service) addReference(ctx context.Context, in store.Install) {
	ix, err := s.references(ctx)
	if err != nil {
		s.log.Warn("lineage: adding the approved skill as a reference", "skill", in.Key, "err", err)
	}
	if ix == nil {
		return
	}
	changed, err := ix.Sync(approvedReference(in), filepath.Join(in.Dir, SkillDir))
	if err != nil {
		s.log.Warn("lineage: adding the approved skill as a reference", "skill", in.Key, "err", err)
		return
	}
	if changed {
		s.saveLineage(ix)
	}
}

// saveLineage writes the index to its file, when it has one.
func (s *Service) saveLineage(ix *lineage.Index) {
	if s.lineageFile == "" {
		return
	}
	if err := ix.Save(s.lineageFile); err != nil {
		s.log.Warn("lineage: saving the index", "file", s.lineageFile, "err", err)
	}
}

// approvedReference is the reference an approved install is: trusted, and
// stamped with its content digest (its managed tree never changes).
func approvedReference(in store.Install) lineage.Reference {
	return lineage.Reference{Name: in.Key, Origin: OriginApproved, Trusted: true, Stamp: in.Digest}
}

// references opens the reference index on first use (Options.Lineage) and
// makes every approved install a reference of it; nil without one. A
// failure is returned, and the next call tries again.
func (s *Service) references(ctx context.Context) (*lineage.Index, error) {
	if s.openLineage == nil {
		return nil, nil
	}
	s.lineageMu.Lock()
	defer s.lineageMu.Unlock()
	if s.lineage != nil {
		return s.lineage, nil
	}
	ix, err := s.openLineage(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: lineage references: %w", ErrStorage, err)
	}
	if err := s.syncApproved(ctx, ix); err != nil {
		return nil, err
	}
	s.lineage = ix
	return ix, nil
}

// syncApproved makes every approved install a reference of ix (reading only
// those not indexed at their digest) and saves it when it changed.
func (s *Service) syncApproved(ctx context.Context, ix *lineage.Index) error {
	ins, err := s.st.Installs(ctx, store.InstallFilter{States: []store.InstallState{store.StateInstalled, store.StateEnabled, store.StateDisabled}})
	if err != nil {
		return fmt.Errorf("%w: lineage references: %w", ErrStorage, err)
	}
	changed := false
	for _, in := range ins {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := ix.Sync(approvedReference(in), filepath.Join(in.Dir, SkillDir))
		if err != nil {
			s.log.Warn("lineage: adding an approved skill as a reference", "skill", in.Key, "err", err)
			continue
		}
		changed = changed || c
	}
	if changed {
		s.saveLineage(ix)
	}
	return nil
}

// lineageText writes layer 4's lineage: the one-line account, then each
// changed file's added lines and unified diff.
func lineageText(b *strings.Builder, d *lineage.Derivation) {
	if d == nil {
		return
	}
	trust := ""
	if d.Trusted {
		trust = ", trusted: its identical files are not reported again"
	}
	fmt.Fprintf(b, "      %s (similarity %.2f%s)\n", d.Summary(), d.Score, trust)
	for _, p := range d.Added {
		fmt.Fprintf(b, "        added %s\n", p)
	}
	for _, p := range d.Removed {
		fmt.Fprintf(b, "        removed %s\n", p)
	}
	for _, c := range d.Changed {
		fmt.Fprintf(b, "        changed %s: added or changed %s %s\n", c.Path, pluralLines(len(c.AddedLines)), joinInts(c.AddedLines))
		for line := range strings.Lines(c.Diff) {
			fmt.Fprintf(b, "          %s", line)
		}
		if c.Truncated {
			b.WriteString("          … (diff cut at 64 KiB)\n")
		}
	}
}

func pluralLines(n int) string {
	if n == 1 {
		return "line"
	}
	return "lines"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
