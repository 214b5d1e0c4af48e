package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// appendEvents appends n records of action "test.event" to c's log.
func appendEvents(t testing.TB, c *console, n int) {
	t.Helper()
	log := audit.NewLog(c.db)
	batch := make([]audit.Record, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, audit.Record{Time: c.now.Add(time.Duration(i) * time.Millisecond), Actor: "system", Action: "test.event", Subject: fmt.Sprintf("s%d", i), Reasons: []string{"fixture"}})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := log.Append(context.Background(), batch...); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

var seqCell = regexp.MustCompile(`<tr><td>(\d+)</td>`)
var olderLink = regexp.MustCompile(`href="/admin/audit\?action=test\.&amp;before=(\d+)">Older records`)

// TestAuditPaging pages back through 120 records, 50 at a time, newest
// first, each page one query.
func TestAuditPaging(t *testing.T) {
	c := newConsole(t)
	appendEvents(t, c, 120)
	c.signIn(t, "sgt_admin")
	path := "/admin/audit?action=test."
	var pages [][]string
	for path != "" {
		status, _, body := c.get(t, path)
		if status != http.StatusOK {
			t.Fatalf("%s: %d", path, status)
		}
		var seqs []string
		for _, m := range seqCell.FindAllStringSubmatch(body, -1) {
			seqs = append(seqs, m[1])
		}
		pages = append(pages, seqs)
		path = ""
		if m := olderLink.FindStringSubmatch(body); m != nil {
			path = "/admin/audit?action=test.&before=" + m[1]
		}
	}
	if len(pages) != 3 || len(pages[0]) != 50 || len(pages[1]) != 50 || len(pages[2]) != 20 ||
		pages[0][0] != "120" || pages[0][49] != "71" || pages[1][0] != "70" || pages[2][19] != "1" {
		t.Fatalf("pages: %d, sizes and bounds %v", len(pages), pages)
	}
	if status, _, _ := c.get(t, "/admin/audit?before=zero"); status != http.StatusBadRequest {
		t.Fatalf("a bad before: %d", status)
	}
}

// BenchmarkPages measures the server time of each page of the console
// (the handler alone, no network) on a registry of 10,000 skills, an audit
// log of 100,000 records, 200 grants and an install under review.
// bench/admin.sh runs it, prints p50 and p99 per page and checks each
// against 200 ms.
func BenchmarkPages(b *testing.B) {
	c := newConsole(b)
	appendEvents(b, c, 100_000)
	gen := b.TempDir()
	for i := range 10_000 {
		dir := filepath.Join(gen, fmt.Sprintf("g%02d", i%100), fmt.Sprintf("skill-%05d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		md := fmt.Sprintf("---\nname: skill-%05d\ndescription: Generated skill %d for the console benchmark; it does one small task.\n---\nDo the task.\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := c.reg.Scan(context.Background(), []discover.Root{
		{Path: filepath.Join("..", "..", "..", "examples", "skills"), Scope: discover.ScopeProject},
		{Path: gen, Scope: discover.ScopeUser},
	}, nil); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range 200 {
		if _, err := c.eng.AddGrant(ctx, policy.Grant{Principal: fmt.Sprintf("acme/agent-%d", i), Capability: "tools/fs:fs/delete_file",
			Level: capability.RiskDestructive, Uses: 1, Reason: "benchmark", CreatedBy: "operator:bench"}); err != nil {
			b.Fatal(err)
		}
	}
	installNotes(b, c)
	// A queue of 100 changes, half of them decided.
	for i := range 100 {
		ch, _, err := c.db.QueueChange(ctx, store.Change{Kind: store.ChangePromoteProvider, Key: fmt.Sprintf("promote_provider:create_thing_%d", i),
			Subject: fmt.Sprintf("create_thing_%d", i), Summary: "create_thing: one executor", QueuedBy: "operator:bench", Why: "benchmark",
			Proposal: json.RawMessage(`{"executor":{"name":"create_thing","description":"Create a new thing.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}},"new":true,` +
				`"backends":[{"provider":"github","skill":"gh","server":"gh","tool":"create_thing","arguments":{"name":"args.name"}},{"provider":"gitlab","skill":"gl","server":"gl","tool":"create_thing","arguments":{"name":"args.name"}}],"evidence":["gh (provider github) offers gh/create_thing"],"drafter":"deterministic"}`)},
			store.AuditRecord{Actor: "operator:bench", Action: "change.queue"}, audit.SealStored)
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 1 {
			if _, err := c.db.DecideChange(ctx, store.ChangeDecision{ID: ch.ID, To: store.ChangeRejected, By: "operator:bench", Reason: "benchmark decision"},
				store.AuditRecord{Actor: "operator:bench", Action: "change.reject"}, audit.SealStored); err != nil {
				b.Fatal(err)
			}
		}
	}
	c.signIn(b, "sgt_admin")
	u, _ := url.Parse(c.url + "/admin/")
	cookies := c.http.Jar.Cookies(u)
	pages := []string{
		"/admin/", "/admin/installs", "/admin/installs/review?name=notes", "/admin/grants",
		"/admin/audit", "/admin/audit?before=500", "/admin/audit?action=install.", "/admin/audit?subject=s99999",
		"/admin/skills", "/admin/skills?page=50", "/admin/skills?q=skill-09999", "/admin/skills/show?name=skill-05000",
		"/admin/skills/show?name=skill-05000&file=SKILL.md", "/admin/policies", "/admin/changes", "/admin/changes/show?id=99",
	}
	times := make([][]time.Duration, len(pages))
	b.ResetTimer()
	for b.Loop() {
		for i, p := range pages {
			req := httptest.NewRequest(http.MethodGet, p, nil)
			for _, ck := range cookies {
				req.AddCookie(ck)
			}
			rec := httptest.NewRecorder()
			start := time.Now()
			c.handler.ServeHTTP(rec, req)
			times[i] = append(times[i], time.Since(start))
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", p, rec.Code, rec.Body.String())
			}
		}
	}
	b.StopTimer()
	for i, p := range pages {
		name := strings.NewReplacer("/admin/", "", "?", "_", "=", "-", "&", "_", "/", "_").Replace(p)
		if name == "" {
			name = "overview"
		}
		b.ReportMetric(float64(percentile(times[i], 0.5).Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(percentile(times[i], 0.99).Microseconds())/1000, name+"-p99-ms")
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

// TestAuditVerify: the overview's button verifies the whole hash chain and
// shows the outcome with who asked.
func TestAuditVerify(t *testing.T) {
	c := newConsole(t)
	appendEvents(t, c, 120)
	csrf := c.signIn(t, "sgt_admin")
	_, _, page := c.get(t, "/admin/")
	if !strings.Contains(page, "Not verified since this server started.") || !strings.Contains(page, "Verify the hash chain now") {
		t.Fatalf("overview before verifying:\n%s", page)
	}
	status, loc, _ := c.post(t, "/admin/audit/verify", url.Values{"csrf": {csrf}})
	if status != http.StatusSeeOther {
		t.Fatalf("verify: %d", status)
	}
	_, _, page = c.get(t, loc)
	if !strings.Contains(page, "audit log OK: 120 records, head 120") || !strings.Contains(page, "by operator:ops/alice@T0: the chain of 120 records holds (head 120)") {
		t.Fatalf("overview after verifying:\n%s", page)
	}
}
