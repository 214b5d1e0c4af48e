package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/store"
	"github.com/skillgate/skillgate/store/sqlite"
)

func TestSessions(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return clock }

	in := store.Session{ID: "s1", Tenant: "acme", Agent: "drafter", Tier: "T3"}
	if err := db.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(ctx, in); !errors.Is(err, store.ErrConflict) {
		t.Errorf("second CreateSession = %v, want ErrConflict", err)
	}
	got, err := db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Tenant != "acme" || got.Agent != "drafter" || got.Tier != "T3" || len(got.Skills) != 0 || !got.CreatedAt.Equal(clock) {
		t.Errorf("Session = %+v", got)
	}

	clock = clock.Add(time.Minute)
	skills := []store.LoadedSkill{
		{Key: "escrituras/compraventa", Mount: "compraventa"},
		{Key: "contratos/compraventa", Mount: "contratos--compraventa", LoadedAt: clock.Add(-time.Hour)},
	}
	if err := db.SetSessionSkills(ctx, "s1", skills); err != nil {
		t.Fatal(err)
	}
	got, err = db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	keys := func(ls []store.LoadedSkill) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Key+"@"+l.Mount)
		}
		return out
	}
	if want := []string{"escrituras/compraventa@compraventa", "contratos/compraventa@contratos--compraventa"}; !slices.Equal(keys(got.Skills), want) {
		t.Errorf("skills = %q, want %q", keys(got.Skills), want)
	}
	if !got.Skills[0].LoadedAt.Equal(clock) || !got.Skills[1].LoadedAt.Equal(clock.Add(-time.Hour)) || !got.UpdatedAt.Equal(clock) {
		t.Errorf("times = %v %v %v", got.Skills[0].LoadedAt, got.Skills[1].LoadedAt, got.UpdatedAt)
	}

	tests := []struct {
		name   string
		id     string
		skills []store.LoadedSkill
		want   error
	}{
		{"unknown session", "nope", nil, store.ErrNotFound},
		{"duplicate key", "s1", []store.LoadedSkill{{Key: "a", Mount: "a"}, {Key: "a", Mount: "b"}}, store.ErrConflict},
		{"duplicate mount", "s1", []store.LoadedSkill{{Key: "a", Mount: "a"}, {Key: "b", Mount: "a"}}, store.ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := db.SetSessionSkills(ctx, tc.id, tc.skills); !errors.Is(err, tc.want) {
				t.Errorf("SetSessionSkills = %v, want %v", err, tc.want)
			}
		})
	}
	// A refused change leaves the skills as they were.
	got, _ = db.Session(ctx, "s1")
	if len(got.Skills) != 2 {
		t.Errorf("after refused changes: %q", keys(got.Skills))
	}

	if err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Session(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Session after delete = %v, want ErrNotFound", err)
	}
	if err := db.DeleteSession(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
}
