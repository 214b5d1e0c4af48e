package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
)

const (
	numSessions = 100
	numSkills   = 20
)

// TestConcurrentSessions runs 100 sessions at once over one store, each
// with its own workspace and loaded skills, loading, unloading, reading,
// writing and searching. No session ever sees another's workspace files or
// skills it has not loaded.
func TestConcurrentSessions(t *testing.T) {
	forEachStore(t, func(t *testing.T, st blob.Store) {
		ctx := context.Background()
		for k := range numSkills {
			name := fmt.Sprintf("skill%02d", k)
			put(t, st, skillPrefix(t, "cat", name)+"SKILL.md", fmt.Sprintf("# %s\nMARK-%s\n", name, name))
			put(t, st, skillPrefix(t, "cat", name)+"ref/notes.md", "MARK-"+name+"\n")
		}
		var wg sync.WaitGroup
		errs := make(chan error, numSessions)
		for i := range numSessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := runSession(ctx, t, st, i); err != nil {
					errs <- fmt.Errorf("session %d: %w", i, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func skillName(k int) string { return fmt.Sprintf("skill%02d", k%numSkills) }

func runSession(ctx context.Context, t *testing.T, st blob.Store, i int) error {
	id := fmt.Sprintf("s%03d", i)
	ws, err := vfs.WorkspaceMount(st, tenant, id)
	if err != nil {
		return err
	}
	fsys, err := vfs.New(vfs.Options{Mounts: []vfs.Mount{ws}, GrepWorkers: 2})
	if err != nil {
		return err
	}
	load := func(ks ...int) ([]string, error) {
		var mounts []vfs.SkillMount
		var names []string
		for _, k := range ks {
			n := skillName(k)
			p, err := bucket.SkillPrefix(tenant, "cat", n)
			if err != nil {
				return nil, err
			}
			mounts = append(mounts, vfs.SkillMount{Name: n, Store: st, Prefix: p})
			names = append(names, n)
		}
		slices.Sort(names)
		return names, fsys.SetSkills(mounts)
	}
	secret := "secret of " + id
	if err := fsys.Write(ctx, "/workspace/mine.md", secret+"\n"); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	for round, ks := range [][]int{{i, i + 7}, {i + 3}, {i, i + 11, i + 13}} {
		loaded, err := load(ks...)
		if err != nil {
			return err
		}
		if err := checkView(ctx, fsys, id, secret, loaded); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		note := fmt.Sprintf("/workspace/round%d.md", round)
		if err := fsys.Write(ctx, note, id+" round\n"); err != nil {
			return fmt.Errorf("write %s: %w", note, err)
		}
		if n, err := fsys.Edit(ctx, note, "round", "done", false); err != nil || n != 1 {
			return fmt.Errorf("edit %s: %d, %w", note, n, err)
		}
	}
	l, err := fsys.LsInfo(ctx, "/workspace")
	if err != nil {
		return err
	}
	var got []string
	for _, e := range l.Entries {
		got = append(got, e.Path)
	}
	want := []string{"/workspace/mine.md", "/workspace/round0.md", "/workspace/round1.md", "/workspace/round2.md"}
	if !slices.Equal(got, want) {
		return fmt.Errorf("ls /workspace = %q, want %q", got, want)
	}
	return nil
}

// checkView asserts what one session sees with the given skills loaded.
func checkView(ctx context.Context, fsys *vfs.FS, id, secret string, loaded []string) error {
	body, err := fsys.Read(ctx, "/workspace/mine.md", 0, 0)
	if err != nil || body != "     1\t"+secret {
		return fmt.Errorf("read own file = %q, %v", body, err)
	}
	l, err := fsys.LsInfo(ctx, "/skills")
	if err != nil {
		return err
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(e.Path, "/skills/"), "/"))
	}
	if !slices.Equal(names, loaded) {
		return fmt.Errorf("ls /skills = %q, want %q", names, loaded)
	}
	for k := range numSkills {
		n := skillName(k)
		_, err := fsys.Read(ctx, "/skills/"+n+"/SKILL.md", 0, 0)
		if slices.Contains(loaded, n) != (err == nil) {
			return fmt.Errorf("read skill %s (loaded %v) = %v", n, slices.Contains(loaded, n), err)
		}
		if err != nil && !errors.Is(err, vfs.ErrNotFound) {
			return fmt.Errorf("read unloaded skill %s = %v, want not found", n, err)
		}
	}
	res, err := fsys.GrepRaw(ctx, "secret of", "/", "")
	if err != nil {
		return err
	}
	if len(res.Matches) != 1 || res.Matches[0].Text != secret {
		return fmt.Errorf("grep secrets = %+v, want only %q", res.Matches, secret)
	}
	res, err = fsys.GrepRaw(ctx, "MARK-", "/skills", "")
	if err != nil {
		return err
	}
	for _, m := range res.Matches {
		if !slices.Contains(loaded, strings.TrimPrefix(m.Text, "MARK-")) {
			return fmt.Errorf("grep found %q from a skill that is not loaded", m.Text)
		}
	}
	if len(res.Matches) != 2*len(loaded) {
		return fmt.Errorf("grep MARK- found %d, want %d", len(res.Matches), 2*len(loaded))
	}
	g, err := fsys.GlobInfo(ctx, "**/*.md", "/")
	if err != nil {
		return err
	}
	for _, e := range g.Entries {
		if strings.HasPrefix(e.Path, "/workspace/") {
			continue
		}
		parts := strings.Split(e.Path, "/")
		if parts[1] != "skills" || !slices.Contains(loaded, parts[2]) {
			return fmt.Errorf("glob found %s", e.Path)
		}
	}
	return nil
}

// TestSwapSkillsWhileReading: readers racing SetSkills always see a
// consistent table: either the skill and its files, or nothing.
func TestSwapSkillsWhileReading(t *testing.T) {
	st := newLocal(t)
	seed(t, st)
	fsys := newSession(t, st, "s1", vfs.Options{})
	ctx := context.Background()
	mounted := []vfs.SkillMount{skill(t, st, "compraventa", "escrituras", "compraventa")}
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				_ = fsys.SetSkills(mounted)
			} else {
				_ = fsys.SetSkills(nil)
			}
		}
	}()
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for range 200 {
				got, err := fsys.Read(ctx, "/skills/compraventa/disclosure_clausulas.md", 0, 1)
				if err != nil && !errors.Is(err, vfs.ErrNotFound) || err == nil && got != "     1\t# Cláusulas" {
					t.Errorf("Read during swaps = %q, %v", got, err)
					return
				}
				l, err := fsys.LsInfo(ctx, "/skills")
				if err != nil || len(l.Entries) > 1 {
					t.Errorf("ls /skills during swaps = %+v, %v", l.Entries, err)
					return
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	<-swapped
}
