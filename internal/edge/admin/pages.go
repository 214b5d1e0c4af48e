package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// The values the forms offer for risk metadata.
var (
	riskLevels  = []capability.RiskLevel{capability.RiskRead, capability.RiskWrite, capability.RiskDestructive}
	sideEffects = []capability.SideEffects{capability.SideEffectsNone, capability.SideEffectsInternal, capability.SideEffectsExternal}
	egress      = []capability.DataEgress{capability.EgressNone, capability.EgressNetwork}
)

// installStates are the states the installs page filters by.
var installStates = store.InstallStates

// pageNames are the templates, each rendered inside layout.html.
var pageNames = []string{"login", "overview", "installs", "review", "skills", "skill", "policies", "grants", "audit", "changes", "change", "connections", "authorize", "connected", "error"}

func (c *Console) parse() error {
	funcs := template.FuncMap{
		"time": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		},
		"timep": func(t *time.Time) string {
			if t == nil {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04Z")
		},
		"short": func(s string) string {
			if len(s) > 19 {
				return s[:19] + "…"
			}
			return s
		},
		"join":     strings.Join,
		"output":   clipOutput,
		"diffrows": diffRows,
		"paths":    pathsOf,
		"ints":     joinInts,
		"json": func(v any) string {
			b, _ := json.Marshal(v)
			return string(b)
		},
	}
	c.pages = map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("admin: template %s: %w", name, err)
		}
		c.pages[name] = t
	}
	return nil
}

// render writes page with data (a map; the session's operator and CSRF
// token are added).
func (c *Console) render(w http.ResponseWriter, r *http.Request, s *session, status int, page string, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	data["Page"] = page
	if s != nil {
		data["Operator"] = s.principal.String()
		data["CSRF"] = s.csrf
	}
	if msg := r.URL.Query().Get("done"); msg != "" && data["Done"] == nil {
		data["Done"] = msg
	}
	var b strings.Builder
	if err := c.pages[page].Execute(&b, data); err != nil {
		c.log.ErrorContext(r.Context(), "admin console: rendering failed", "page", page, "err", err)
		http.Error(w, "internal error; the details are in the skillgate log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, b.String())
}

// fail renders an error page with status.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, status int, err error) {
	c.render(w, r, s, status, "error", map[string]any{"Status": status, "StatusText": http.StatusText(status), "Error": err.Error()})
}

// installStatus is the HTTP status of an install error (500 for an
// internal one).
func installStatus(err error) int {
	if st, ok := install.HTTPStatus(err); ok {
		return st
	}
	return http.StatusInternalServerError
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s *session) {
	data := map[string]any{}
	if c.opts.Installs != nil {
		all, err := c.opts.Installs.List(r.Context())
		if err != nil {
			c.fail(w, r, s, http.StatusInternalServerError, err)
			return
		}
		counts := map[store.InstallState]int{}
		for _, in := range all {
			counts[in.State]++
		}
		type count struct {
			State store.InstallState
			N     int
		}
		var cs []count
		for st, n := range counts {
			cs = append(cs, count{st, n})
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].State < cs[j].State })
		pending, err := c.opts.Installs.Pending(r.Context())
		if err != nil {
			c.fail(w, r, s, http.StatusInternalServerError, err)
			return
		}
		data["Counts"], data["Pending"], data["Total"] = cs, pending, len(all)
	}
	if c.opts.Changes != nil {
		items, err := c.opts.Changes.List(r.Context(), false)
		if err != nil {
			c.fail(w, r, s, http.StatusInternalServerError, err)
			return
		}
		data["Changes"] = items
	}
	if c.drift != nil {
		data["Drift"] = c.drift.latest(context.WithoutCancel(r.Context()))
	}
	if c.opts.Policy != nil {
		active := 0
		now := c.opts.Now()
		for _, g := range c.opts.Policy.Grants() {
			if g.Status(now) == "active" {
				active++
			}
		}
		data["ActiveGrants"] = active
	}
	c.mu.Lock()
	if c.verified != nil {
		v := *c.verified
		data["Verified"] = &v
	}
	c.mu.Unlock()
	if _, ok := c.opts.Audit.(audit.Log); ok {
		data["CanVerify"] = true
	}
	if c.opts.Audit != nil {
		recent, err := c.opts.Audit.Query(r.Context(), audit.Filter{Limit: 10, Last: true})
		if err != nil {
			c.fail(w, r, s, http.StatusInternalServerError, err)
			return
		}
		slices.Reverse(recent)
		data["Recent"] = recent
	}
	c.render(w, r, s, http.StatusOK, "overview", data)
}

func (c *Console) installs(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Installs == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no install service"))
		return
	}
	all, err := c.opts.Installs.List(r.Context())
	if err != nil {
		c.fail(w, r, s, http.StatusInternalServerError, err)
		return
	}
	state := r.URL.Query().Get("state")
	var shown []install.Summary
	for _, in := range all {
		if state == "" || string(in.State) == state {
			shown = append(shown, in)
		}
	}
	c.render(w, r, s, http.StatusOK, "installs", map[string]any{"Installs": shown, "State": state, "States": installStates})
}

func (c *Console) review(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Installs == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no install service"))
		return
	}
	name := r.URL.Query().Get("name")
	rv, err := c.opts.Installs.Review(r.Context(), name)
	if err != nil {
		c.fail(w, r, s, installStatus(err), err)
		return
	}
	c.renderReview(w, r, s, http.StatusOK, rv, "")
}

func (c *Console) renderReview(w http.ResponseWriter, r *http.Request, s *session, status int, rv *install.Review, problem string) {
	// The forms offered are the actions valid for the version now
	// (install.Actions). Approving also needs content the scan does not
	// block (nothing can be approved then, as Approve checks), and
	// approving the whole proposal a proposal that is not blocked.
	can := map[string]bool{}
	for _, a := range rv.Actions {
		can[string(a)] = true
	}
	can[string(install.ActionApprove)] = can[string(install.ActionApprove)] && !rv.ContentBlocked()
	// An approved version drift does not block may change its settings
	// (constraints, call approval) in place.
	can["settings"] = rv.State.Approved() && len(rv.Blocked) == 0 && !can[string(install.ActionApprove)]
	c.render(w, r, s, status, "review", map[string]any{"R": rv, "Problem": problem, "Text": rv.Text(), "Can": can,
		"ApproveAll": can[string(install.ActionApprove)] && (rv.State.Approved() || !rv.Validation.Blocked),
		"Version":    rv.Key + "@" + rv.Digest,
		"Risks":      riskLevels, "SideEffects": sideEffects, "Egress": egress, "CallApprovals": capability.CallApprovals})
}

// maxShownOutput bounds a server's captured output shown on a page.
const maxShownOutput = 16 << 10

// shownOutput is captured output as a page shows it: at most
// maxShownOutput bytes (cut at a character), and whether it was cut.
type shownOutput struct {
	Text      string
	Truncated bool
	Bound     int
}

func clipOutput(s string) shownOutput {
	if len(s) <= maxShownOutput {
		return shownOutput{Text: s, Bound: maxShownOutput}
	}
	return shownOutput{Text: strings.ToValidUTF8(s[:maxShownOutput], ""), Truncated: true, Bound: maxShownOutput}
}

// installAction runs one operation of the install flow from a form, then
// shows the install's review again.
func (c *Console) installAction(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Installs == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no install service"))
		return
	}
	svc, ctx, actor := c.opts.Installs, r.Context(), s.actor()
	name, why := r.PostFormValue("name"), r.PostFormValue("why")
	var rv *install.Review
	var err error
	op := r.PathValue("op")
	switch op {
	case "approve":
		var only []string
		if r.PostFormValue("some") != "" {
			only = r.PostForm["only"]
			if len(only) == 0 {
				err = fmt.Errorf("%w: tick the capabilities to approve, or approve all", install.ErrUsage)
				break
			}
		}
		var settings []manifest.Setting
		if settings, err = formSettings(r.PostForm); err == nil {
			rv, err = svc.ApproveWith(ctx, name, install.ApproveOptions{Only: only, Settings: settings}, actor)
		}
	case "reject":
		rv, err = svc.Reject(ctx, name, why, actor)
	case "complete":
		rv, err = svc.Complete(ctx, name, install.Completion{Capability: r.PostFormValue("capability"), RiskLevel: r.PostFormValue("risk"),
			SideEffects: r.PostFormValue("sideEffects"), DataEgress: r.PostFormValue("egress"), Why: why, Force: r.PostFormValue("force") != ""}, actor)
	case "suppress":
		rv, err = svc.Suppress(ctx, name, r.PostFormValue("target"), why, actor)
	case "enable":
		rv, err = svc.Enable(ctx, name, actor)
	case "disable":
		rv, err = svc.Disable(ctx, name, actor)
	case "recheck":
		rv, err = svc.Recheck(ctx, name, actor)
	default:
		c.fail(w, r, s, http.StatusNotFound, fmt.Errorf("unknown operation %q", op))
		return
	}
	if err != nil {
		// Show the install again with the problem above its forms.
		if cur, rerr := svc.Review(ctx, name); rerr == nil {
			c.renderReview(w, r, s, installStatus(err), cur, err.Error())
			return
		}
		c.fail(w, r, s, installStatus(err), err)
		return
	}
	http.Redirect(w, r, Prefix+"/installs/review?name="+url.QueryEscape(install.VersionRef(rv.Key, rv.Digest))+"&done="+url.QueryEscape(op+": "+rv.Reason), http.StatusSeeOther)
}

func (c *Console) grants(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderGrants(w, r, s, http.StatusOK, "")
}

func (c *Console) renderGrants(w http.ResponseWriter, r *http.Request, s *session, status int, problem string) {
	if c.opts.Policy == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no policy engine"))
		return
	}
	type row struct {
		policy.Grant
		Status string
	}
	now := c.opts.Now()
	var rows []row
	for _, g := range c.opts.Policy.Grants() {
		rows = append(rows, row{g, g.Status(now)})
	}
	c.render(w, r, s, status, "grants", map[string]any{"Grants": rows, "Problem": problem, "Levels": riskLevels, "Form": r.PostForm})
}

func (c *Console) addGrant(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Policy == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no policy engine"))
		return
	}
	g := policy.Grant{Principal: strings.TrimSpace(r.PostFormValue("principal")), Capability: strings.TrimSpace(r.PostFormValue("capability")),
		Level: capability.RiskLevel(r.PostFormValue("level")), Reason: strings.TrimSpace(r.PostFormValue("reason")), CreatedBy: s.actor()}
	if u := strings.TrimSpace(r.PostFormValue("uses")); u != "" {
		n, err := strconv.Atoi(u)
		if err != nil || n < 0 {
			c.renderGrants(w, r, s, http.StatusBadRequest, fmt.Sprintf("uses %q: a whole number, 0 for unlimited", u))
			return
		}
		g.Uses = n
	}
	if e := strings.TrimSpace(r.PostFormValue("expires")); e != "" {
		d, err := policy.ParseDuration(e)
		if err != nil {
			c.renderGrants(w, r, s, http.StatusBadRequest, fmt.Sprintf("expires %q: a duration like 30m, 2h or 7d", e))
			return
		}
		t := c.opts.Now().Add(d)
		g.ExpiresAt = &t
	}
	added, err := c.opts.Policy.AddGrant(r.Context(), g)
	if err != nil {
		c.renderGrants(w, r, s, http.StatusBadRequest, err.Error())
		return
	}
	http.Redirect(w, r, Prefix+"/grants?done="+url.QueryEscape("added grant "+added.ID), http.StatusSeeOther)
}

func (c *Console) revokeGrant(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Policy == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no policy engine"))
		return
	}
	id := r.PostFormValue("id")
	if err := c.opts.Policy.RevokeGrant(r.Context(), id, s.actor()); err != nil {
		c.renderGrants(w, r, s, http.StatusBadRequest, err.Error())
		return
	}
	http.Redirect(w, r, Prefix+"/grants?done="+url.QueryEscape("revoked grant "+id), http.StatusSeeOther)
}

// auditPageSize is how many records a page of the audit log shows.
const auditPageSize = 50

// auditFilter reads the audit page's filter from the query.
func auditFilter(q url.Values) (audit.Filter, error) {
	f := audit.Filter{Action: q.Get("action"), Subject: q.Get("subject"), Actor: q.Get("actor"), Decision: capability.Effect(q.Get("decision"))}
	if b := q.Get("before"); b != "" {
		if n, err := strconv.ParseInt(b, 10, 64); err != nil || n < 1 {
			return f, fmt.Errorf("before %q: a record number", b)
		}
	}
	if f.Decision != "" && !f.Decision.Valid() {
		return f, fmt.Errorf("decision %q: allow, deny or require_approval", f.Decision)
	}
	return f, nil
}

func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Audit == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no audit log"))
		return
	}
	q := r.URL.Query()
	f, err := auditFilter(q)
	if err != nil {
		c.fail(w, r, s, http.StatusBadRequest, err)
		return
	}
	// The newest page first; "before" pages back.
	var before int64
	if b := q.Get("before"); b != "" {
		before, _ = strconv.ParseInt(b, 10, 64)
	}
	recs, err := c.page(r, f, before)
	if err != nil {
		c.fail(w, r, s, http.StatusInternalServerError, err)
		return
	}
	older := int64(0)
	if len(recs) == auditPageSize {
		older = recs[len(recs)-1].Seq
	}
	export := url.Values{}
	for _, k := range []string{"action", "subject", "actor", "decision"} {
		if v := q.Get(k); v != "" {
			export.Set(k, v)
		}
	}
	olderURL := ""
	if older > 0 {
		q := url.Values{}
		for k, v := range export {
			q[k] = v
		}
		q.Set("before", strconv.FormatInt(older, 10))
		olderURL = Prefix + "/audit?" + q.Encode()
	}
	c.render(w, r, s, http.StatusOK, "audit", map[string]any{"Records": recs, "F": f,
		"Older": urlOf(olderURL), "Export": urlOf(Prefix + "/audit.jsonl?" + export.Encode()),
		"Decisions": []string{string(capability.Allow), string(capability.Deny), string(capability.RequireApproval)}})
}

// page returns up to auditPageSize records matching f with Seq below
// before (0: the newest), newest first: one indexed query, whatever the
// size of the log.
func (c *Console) page(r *http.Request, f audit.Filter, before int64) ([]audit.Record, error) {
	f.BeforeSeq, f.Limit, f.Last = before, auditPageSize, true
	recs, err := c.opts.Audit.Query(r.Context(), f)
	slices.Reverse(recs)
	return recs, err
}

// auditExport writes every matching record as JSON Lines.
func (c *Console) auditExport(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Audit == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no audit log"))
		return
	}
	f, err := auditFilter(r.URL.Query())
	if err != nil {
		c.fail(w, r, s, http.StatusBadRequest, err)
		return
	}
	recs, err := c.opts.Audit.Query(r.Context(), f)
	if err != nil {
		c.fail(w, r, s, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/jsonl; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="skillgate-audit.jsonl"`)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, rec := range recs {
		if err := enc.Encode(rec); err != nil {
			return
		}
	}
	bw.Flush()
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// urlOf marks a whole link the console composed itself with net/url (a
// path and an encoded url.Values) as a URL for templates. It is the one
// way a URL reaches a template ready-made: every other value is written
// into a link by html/template, which escapes it for its place in the URL
// (so templates never escape a value themselves: escaped twice, a link
// names something else and answers 404).
func urlOf(s string) template.URL { return template.URL(s) }

// verifyTimeout bounds one verification of the audit log from the console.
const verifyTimeout = 2 * time.Minute

// verifyAudit checks the audit log's whole hash chain (what `skillgate
// audit verify` does), keeps the outcome for the overview, and logs it.
func (c *Console) verifyAudit(w http.ResponseWriter, r *http.Request, s *session) {
	log, ok := c.opts.Audit.(audit.Log)
	if !ok {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server's audit log cannot be verified from the console"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), verifyTimeout)
	defer cancel()
	rep, err := audit.Verify(ctx, log, audit.Head{})
	v := &verification{At: c.opts.Now(), By: s.actor(), Records: rep.Records, Head: rep.Head}
	msg := fmt.Sprintf("audit log OK: %d records, head %d", rep.Records, rep.Head.Seq)
	if err != nil {
		v.Err = err.Error()
		msg = "audit log verification FAILED: " + err.Error()
		c.log.ErrorContext(r.Context(), "admin console: audit verification failed", "by", v.By, "err", err)
	} else {
		c.log.InfoContext(r.Context(), "admin console: audit verified", "by", v.By, "records", rep.Records)
	}
	c.mu.Lock()
	c.verified = v
	c.mu.Unlock()
	http.Redirect(w, r, Prefix+"/?done="+url.QueryEscape(msg), http.StatusSeeOther)
}

// diffRow is one line of a changed file's unified diff as the review page
// shows it: Kind is "add", "del", "ctx", "hunk" (an @@ header) or "meta"
// (anything else, such as "binary files … differ"); Line is the line's
// number in the skill's file for "add" and "ctx" (0 otherwise); Mark is
// its +, - or space.
type diffRow struct {
	Kind string
	Line int
	Mark string
	Text string
}

// diffRows splits c's unified diff (lineage.ChangedFile.Diff, already
// bounded at 64 KiB) into rows, numbering the skill's lines from each
// hunk's header. The a/ and b/ header lines are left out (the page names
// the file); a diff cut short ends where it was cut.
func diffRows(c lineage.ChangedFile) []diffRow {
	var rows []diffRow
	line, first := 0, true
	for l := range strings.Lines(c.Diff) {
		l = strings.TrimSuffix(l, "\n")
		if first && strings.HasPrefix(l, "--- ") {
			continue
		}
		if first && strings.HasPrefix(l, "+++ ") {
			first = false
			continue
		}
		first = false
		switch {
		case strings.HasPrefix(l, "@@ "):
			line = hunkStart(l)
			rows = append(rows, diffRow{Kind: "hunk", Text: l})
		case strings.HasPrefix(l, "+"):
			rows = append(rows, diffRow{Kind: "add", Line: line, Mark: "+", Text: l[1:]})
			line++
		case strings.HasPrefix(l, "-"):
			rows = append(rows, diffRow{Kind: "del", Mark: "-", Text: l[1:]})
		case strings.HasPrefix(l, " "):
			rows = append(rows, diffRow{Kind: "ctx", Line: line, Mark: " ", Text: l[1:]})
			line++
		default:
			rows = append(rows, diffRow{Kind: "meta", Text: l})
		}
	}
	return rows
}

// hunkStart is the first line of the new file a hunk header
// ("@@ -A,B +C,D @@") covers: C, or 0 when the header does not parse.
func hunkStart(h string) int {
	_, after, ok := strings.Cut(h, " +")
	if !ok {
		return 0
	}
	end := strings.IndexAny(after, ", ")
	if end < 0 {
		return 0
	}
	n, err := strconv.Atoi(after[:end])
	if err != nil {
		return 0
	}
	return n
}

// maxListedPaths is how many paths of a lineage list (identical, added,
// removed) the review page shows open; a longer list is collapsed.
const maxListedPaths = 8

// pathList is a titled list of paths on the review page, Collapsed when
// longer than maxListedPaths.
type pathList struct {
	Title     string
	Paths     []string
	Collapsed bool
}

func pathsOf(title string, paths []string) pathList {
	return pathList{Title: title, Paths: paths, Collapsed: len(paths) > maxListedPaths}
}

// joinInts writes line numbers as "3, 4, 5".
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// formSettings reads the review form's per-capability settings: a
// "constraints:serverId/tool" field with a constraint set, an
// "approval:serverId/tool" field with a call approval default; empty
// fields keep what the approval would record without them.
func formSettings(form url.Values) ([]manifest.Setting, error) {
	var constraints, approvals []string
	for _, k := range slices.Sorted(maps.Keys(form)) {
		v := strings.TrimSpace(form.Get(k))
		if v == "" {
			continue
		}
		if name, ok := strings.CutPrefix(k, "constraints:"); ok {
			constraints = append(constraints, name+"="+v)
		} else if name, ok := strings.CutPrefix(k, "approval:"); ok {
			approvals = append(approvals, name+"="+v)
		}
	}
	return install.ParseSettings(constraints, approvals)
}
