package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// RestoreMissing restores from the bucket (Options.Bucket) the approved
// versions whose managed tree this process lacks, with their artefacts:
// another replica approved them while this one ran. It takes the storage
// lock and changes no record; a version it cannot restore stays missing
// (Recover, at the next start, marks it lost). It returns the keys
// restored; without a bucket it does nothing.
func (s *Service) RestoreMissing(ctx context.Context) ([]string, error) {
	if s.bucket == nil {
		return nil, nil
	}
	rows, err := s.st.Installs(ctx, store.InstallFilter{})
	if err != nil {
		return nil, err
	}
	var missing []store.Install
	for _, r := range rows {
		if r.State.Approved() {
			if _, err := os.Stat(filepath.Join(r.Dir, SkillDir)); err != nil {
				missing = append(missing, r)
			}
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	unlock, err := s.storage.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var restored []string
	var errs []error
	for _, r := range missing {
		ok, err := s.restore(ctx, r)
		if err == nil && ok {
			err = s.mirror(r)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			restored = append(restored, r.Key)
		}
	}
	return restored, errors.Join(errs...)
}

// Recovery is what Recover found and repaired.
type Recovery struct {
	// Removed lists directories deleted: temporary ones, versions without a
	// record, and removed versions.
	Removed []string `json:"removed"`
	// Rewritten lists installs whose artefacts were re-mirrored.
	Rewritten []string `json:"rewritten"`
	// Interrupted lists installs left in pending_install or analyzing by a
	// process that died; recheck or install them again to resume.
	Interrupted []string `json:"interrupted"`
	// Lost lists installs whose files were gone; they were marked rejected.
	Lost []string `json:"lost"`
	// Restored lists approved installs whose files this process lacked
	// and took from the bucket (Options.Bucket).
	Restored []string `json:"restored,omitempty"`
}

// Recover makes managed storage agree with the store after a crash: no
// directory without a record, no record without its directory, artefacts
// equal to the recorded ones, no temporary file left. It takes the storage
// lock, so it never disturbs a change in progress in another process.
func (s *Service) Recover(ctx context.Context) (*Recovery, error) {
	unlock, err := s.storage.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep := &Recovery{Removed: []string{}, Rewritten: []string{}, Interrupted: []string{}, Lost: []string{}}
	rows, err := s.st.Installs(ctx, store.InstallFilter{})
	if err != nil {
		return nil, err
	}
	live := map[string]store.Install{}
	for _, r := range rows {
		if r.State != store.StateRemoved {
			live[filepath.Base(r.Dir)] = r
		}
	}
	ents, err := os.ReadDir(s.storage.Root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	for _, e := range ents {
		if e.Name() == ".lock" {
			continue
		}
		if _, ok := live[e.Name()]; ok && e.IsDir() {
			continue
		}
		if s.fetching(e) {
			continue // another process is fetching packages there
		}
		p := filepath.Join(s.storage.Root, e.Name())
		if err := os.RemoveAll(p); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStorage, err)
		}
		rep.Removed = append(rep.Removed, p)
	}
	for _, r := range rows {
		if r.State == store.StateRemoved {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.Dir, SkillDir)); err != nil && r.State.Approved() {
			// Another replica approved it: its tree is in the bucket.
			if ok, rerr := s.restore(ctx, r); rerr != nil {
				s.log.ErrorContext(ctx, "install: could not restore from the bucket", "key", r.Key, "err", rerr)
			} else if ok {
				rep.Restored = append(rep.Restored, r.Key)
			}
		}
		if _, err := os.Stat(filepath.Join(r.Dir, SkillDir)); err != nil {
			if s.bucket != nil && !r.State.Approved() {
				// With a bucket the registry may be shared by replicas on
				// other hosts: a version not approved yet lives only in
				// the managed storage of the host that installed it.
				continue
			}
			if r.State != store.StateRejected {
				if _, err := s.st.TransitionInstall(ctx, audit.SealStored, transition{Digest: r.Digest, From: []store.InstallState{r.State},
					To: store.StateRejected, Actor: "system", Reason: "its files are missing from managed storage; install it again"}.stored()); err != nil {
					return nil, err
				}
				rep.Lost = append(rep.Lost, r.Key)
			}
			continue
		}
		// Temporary artefact files left by a crash.
		if ents, err := os.ReadDir(r.Dir); err == nil {
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), tmpPrefix) {
					os.Remove(filepath.Join(r.Dir, e.Name()))
				}
			}
		}
		before := s.artefactsMatch(r)
		if err := s.mirror(r); err != nil {
			return nil, err
		}
		if !before {
			rep.Rewritten = append(rep.Rewritten, r.Key)
		}
		if err := s.replicate(ctx, r); err != nil {
			s.log.ErrorContext(ctx, "install: version not stored in the bucket", "key", r.Key, "err", err)
		}
		if r.State == store.StatePendingInstall || r.State == store.StateAnalyzing {
			rep.Interrupted = append(rep.Interrupted, r.Key)
		}
	}
	if err := s.SyncCatalog(ctx); err != nil {
		return nil, err
	}
	return rep, nil
}

// SyncCatalog makes Options.Catalog list exactly the enabled installs. It
// runs after every change and at Recover (a process that died between a
// change and its sync leaves nothing behind); it is idempotent and cheap
// when nothing changed.
func (s *Service) SyncCatalog(ctx context.Context) error {
	if s.catalog == nil {
		return nil
	}
	rows, err := s.st.Installs(ctx, store.InstallFilter{States: []store.InstallState{store.StateEnabled}})
	if err != nil {
		return err
	}
	skills := make([]registry.Imported, 0, len(rows))
	for _, in := range rows {
		skills = append(skills, registry.Imported{Key: in.Key, Name: in.Name, Category: in.Category, Dir: filepath.Join(in.Dir, SkillDir)})
	}
	if err := s.catalog.SyncImported(ctx, s.storage.Root, skills); err != nil {
		return fmt.Errorf("install: list the enabled installs in the registry: %w", err)
	}
	return nil
}

func (s *Service) artefactsMatch(in store.Install) bool {
	for _, f := range []struct {
		name string
		data json.RawMessage
	}{{manifest.FileProposed, in.Proposed}, {manifest.FileReport, in.Report}, {manifest.FileApproved, in.Manifest}} {
		cur, err := os.ReadFile(filepath.Join(in.Dir, f.name))
		if len(f.data) == 0 {
			if err == nil {
				return false
			}
			continue
		}
		if err != nil || string(cur) != string(f.data) {
			return false
		}
	}
	return true
}
