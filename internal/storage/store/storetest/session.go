package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

func testSessions(t *testing.T, h Harness) {
	ctx := context.Background()
	clock := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	db := h.Open(t, fixedClock(&clock))

	in := store.Session{ID: "s1", Tenant: "acme", Agent: "drafter", Tier: "T3"}
	if err := db.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(ctx, in); !errors.Is(err, store.ErrConflict) || err.Error() != `create session "s1": session "s1" exists: conflict` {
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
	if _, err := db.Session(ctx, "s1"); !errors.Is(err, store.ErrNotFound) || err.Error() != `session "s1": not found` {
		t.Errorf("Session after delete = %v, want ErrNotFound", err)
	}
	if err := db.DeleteSession(ctx, "s1"); !errors.Is(err, store.ErrNotFound) || err.Error() != `delete session "s1": not found` {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
}

// testSessionLastUsed: last use moves on create, on a change of skills and
// on a touch (never backwards); listing filters by it; an idle delete
// keeps a session used since.
func testSessionLastUsed(t *testing.T, h Harness) {
	ctx := context.Background()
	t0 := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	clock := t0
	db := h.Open(t, fixedClock(&clock))
	for _, id := range []string{"old", "mid", "new"} {
		if err := db.CreateSession(ctx, store.Session{ID: id, Tenant: "acme", Agent: "a-" + id, Tier: "T3"}); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(24 * time.Hour)
	}
	// mid loads a skill on day 4; new is touched on day 5, then a stale
	// touch (day 1) does not move it back.
	if err := db.SetSessionSkills(ctx, "mid", []store.LoadedSkill{{Key: "pdf", Mount: "pdf"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchSessions(ctx, t0.Add(5*24*time.Hour), "new", "gone"); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchSessions(ctx, t0, "new"); err != nil {
		t.Fatal(err)
	}
	render := func(ss []store.Session) string {
		var b []string
		for _, s := range ss {
			var keys []string
			for _, l := range s.Skills {
				keys = append(keys, l.Key)
			}
			b = append(b, fmt.Sprintf("%s %s/%s created %s used %s skills %v", s.ID, s.Tenant, s.Agent,
				s.CreatedAt.Format("01-02"), s.LastUsed.Format("01-02"), keys))
		}
		return strings.Join(b, "\n")
	}
	tests := []struct {
		name string
		f    store.SessionFilter
		want string
	}{
		{"all", store.SessionFilter{}, "old acme/a-old created 08-01 used 08-01 skills []\n" +
			"mid acme/a-mid created 08-02 used 08-04 skills [pdf]\n" +
			"new acme/a-new created 08-03 used 08-06 skills []"},
		{"unused since day 4", store.SessionFilter{UnusedSince: t0.Add(3 * 24 * time.Hour)}, "old acme/a-old created 08-01 used 08-01 skills []"},
		{"unused since day 5", store.SessionFilter{UnusedSince: t0.Add(4 * 24 * time.Hour)}, "old acme/a-old created 08-01 used 08-01 skills []\nmid acme/a-mid created 08-02 used 08-04 skills [pdf]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := db.Sessions(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(ss); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	got, err := db.Session(ctx, "mid")
	if err != nil || !got.LastUsed.Equal(t0.Add(3*24*time.Hour)) {
		t.Errorf("Session(mid) = %+v, %v", got, err)
	}

	cut := t0.Add(3 * 24 * time.Hour)
	for _, tc := range []struct {
		id   string
		want string
	}{
		{"old", ""},
		{"mid", `delete idle session "mid": used at 2026-08-04T10:00:00Z: conflict`},
		{"old", `delete idle session "old": not found`},
	} {
		err := db.DeleteIdleSession(ctx, tc.id, cut)
		if got := fmt.Sprint(err); (err == nil) != (tc.want == "") || (err != nil && got != tc.want) {
			t.Errorf("DeleteIdleSession(%s) = %v, want %q", tc.id, err, tc.want)
		}
	}
	if ss, _ := db.Sessions(ctx, store.SessionFilter{}); render(ss) != "mid acme/a-mid created 08-02 used 08-04 skills [pdf]\nnew acme/a-new created 08-03 used 08-06 skills []" {
		t.Errorf("after delete:\n%s", render(ss))
	}
}
