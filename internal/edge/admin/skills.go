package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	agentsession "github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// SkillFiles mounts a skill's recorded files as loading it into an agent
// session would (*session.Manager implements it): the skill page's file
// view reads through it, so operators see what agents are served.
type SkillFiles interface {
	SkillFiles(ctx context.Context, tenant string, e registry.Brief) (store.Version, blob.Store, string, error)
}

// skillsPageSize is how many skills a page of the skills list shows.
const skillsPageSize = 100

// maxShownFile bounds a skill file shown on its page.
const maxShownFile = 1 << 20

// skillRow is one skill in the list.
type skillRow struct {
	registry.Entry
	State string
	// Score is the relevance to the page's query, as text; "" without one.
	Score string
}

// skills lists the registry's skills, filtered and paged.
func (c *Console) skills(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Registry == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no registry"))
		return
	}
	q := r.URL.Query()
	query := registry.Query{Disabled: true, Rejected: true, Shadowed: true, Category: q.Get("category"), Trust: q.Get("trust")}
	if t := q.Get("tier"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 1 || n > 3 {
			c.fail(w, r, s, http.StatusBadRequest, fmt.Errorf("tier %q: 1, 2 or 3", t))
			return
		}
		query.Tier = n
	}
	if inv := q.Get("invokable_by"); inv != "" {
		t, err := skill.ParseAgentTier(inv)
		if err != nil {
			c.fail(w, r, s, http.StatusBadRequest, fmt.Errorf("invokable_by: %v", err))
			return
		}
		query.AgentTier = t
	}
	if tr := query.Trust; tr != "" && !capability.Trust(tr).Valid() {
		c.fail(w, r, s, http.StatusBadRequest, fmt.Errorf("trust %q: core, first_party or imported", tr))
		return
	}
	state := q.Get("state")
	if state != "" && !slices.Contains(skillStates, state) {
		c.fail(w, r, s, http.StatusBadRequest, fmt.Errorf("state %q: %s", state, strings.Join(skillStates, ", ")))
		return
	}
	page := 1
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			c.fail(w, r, s, http.StatusBadRequest, fmt.Errorf("page %q: a page number from 1", p))
			return
		}
		page = n
	}
	es, err := c.opts.Registry.List(r.Context(), query)
	if err != nil {
		c.fail(w, r, s, http.StatusInternalServerError, err)
		return
	}
	var rows []skillRow
	for _, e := range es {
		if st := e.State(); state == "" || st == state {
			rows = append(rows, skillRow{Entry: e, State: st})
		}
	}
	// A text query ranks the rows as skill_list ranks skills for agents.
	if text := strings.TrimSpace(q.Get("q")); text != "" {
		kept := make([]registry.Entry, len(rows))
		for i, r := range rows {
			kept[i] = r.Entry
		}
		ranked, err := registry.Rank(kept, text)
		if err != nil {
			c.fail(w, r, s, http.StatusBadRequest, fmt.Errorf("q: %v", err))
			return
		}
		rows = rows[:0]
		for _, rk := range ranked {
			rows = append(rows, skillRow{Entry: rk.Entry, State: rk.State(), Score: fmt.Sprintf("%.2f", rk.Score)})
		}
	}
	total := len(rows)
	from := min((page-1)*skillsPageSize, total)
	to := min(from+skillsPageSize, total)
	link := func(p int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(p))
		return Prefix + "/skills?" + v.Encode()
	}
	data := map[string]any{"Skills": rows[from:to], "Total": total, "Ranked": strings.TrimSpace(q.Get("q")) != "", "From": from + 1, "To": to, "Q": q, "States": skillStates,
		"Trusts": capability.Trusts, "AgentTiers": skill.AllAgentTiers, "Tiers": []string{"1", "2", "3"}}
	if page > 1 {
		data["Prev"] = urlOf(link(page - 1))
	}
	if to < total {
		data["Next"] = urlOf(link(page + 1))
	}
	c.render(w, r, s, http.StatusOK, "skills", data)
}

// skillStates are the states the skills list filters by.
var skillStates = []string{"enabled", "disabled", "rejected", "shadowed"}

// skillFile is one file of a skill as its page lists it.
type skillFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Digest string `json:"digest,omitempty"`
}

// showSkill is a skill's page: what `skillgate show` says, and its files.
func (c *Console) showSkill(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Registry == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no registry"))
		return
	}
	d, err := c.opts.Registry.Show(r.Context(), r.URL.Query().Get("name"))
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrAmbiguous) {
			status = http.StatusNotFound
		}
		c.fail(w, r, s, status, err)
		return
	}
	var files []skillFile
	if len(d.Entry.Files) > 0 {
		_ = json.Unmarshal(d.Entry.Files, &files)
	}
	var diags []skill.Diagnostic
	if len(d.Entry.Diagnostics) > 0 {
		_ = json.Unmarshal(d.Entry.Diagnostics, &diags)
	}
	var fm map[string]any
	if len(d.Entry.Frontmatter) > 0 {
		_ = json.Unmarshal(d.Entry.Frontmatter, &fm)
	}
	data := map[string]any{"D": d, "Name": r.URL.Query().Get("name"), "State": d.Entry.State(), "Files": files, "Diagnostics": diags, "Frontmatter": fm}
	if path := r.URL.Query().Get("file"); path != "" {
		if !slices.ContainsFunc(files, func(f skillFile) bool { return f.Path == path }) {
			c.fail(w, r, s, http.StatusNotFound, fmt.Errorf("%s is not one of the skill's files", path))
			return
		}
		if c.opts.SkillFiles == nil {
			c.fail(w, r, s, http.StatusNotFound, fmt.Errorf("%s cannot be shown: this server does not serve skill files", path))
			return
		}
		body, note, err := readSkillFile(r.Context(), c.opts.SkillFiles, d.Entry, path)
		if err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, blob.ErrNotFound) || errors.Is(err, agentsession.ErrSkillNotFound) {
				status = http.StatusNotFound
			}
			c.fail(w, r, s, status, err)
			return
		}
		data["File"], data["FileText"], data["FileNote"] = path, body, note
	}
	c.render(w, r, s, http.StatusOK, "skill", data)
}

// readSkillFile reads one of a skill's recorded files for its page
// through files, the agents' own view of a skill's tree
// (session.Manager.SkillFiles): the console shows exactly what an agent
// would be served. The tree serves only the files the registry recorded,
// and refuses what is not a regular file (without blocking on a FIFO), a
// link out of the skill's directory, and a hard link unless its root
// allows them. At most maxShownFile bytes are shown; binary files are
// not.
func readSkillFile(ctx context.Context, files SkillFiles, e *registry.Entry, path string) (text, note string, err error) {
	// The skill's own tenant: an operator sees every tenant's library.
	_, st, prefix, err := files.SkillFiles(ctx, discover.TenantOf(e.Scope, e.Root), registry.Brief{Key: e.Key, Dir: e.Dir})
	if err != nil {
		return "", "", fmt.Errorf("%s cannot be shown: %w", path, err)
	}
	rc, _, err := st.Get(ctx, prefix+path)
	if err != nil {
		return "", "", fmt.Errorf("%s cannot be shown: %w", path, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxShownFile+1))
	if err != nil {
		return "", "", fmt.Errorf("%s cannot be shown: %w", path, err)
	}
	if len(b) > maxShownFile {
		return string(b[:maxShownFile]), fmt.Sprintf("only the first %d bytes are shown", maxShownFile), nil
	}
	if !utf8.Valid(b) || slices.Contains(b, 0) {
		return "", fmt.Sprintf("not text (%d bytes): not shown", len(b)), nil
	}
	return string(b), "", nil
}

// policies shows the active policy set, its check findings, and a form
// that replays a request (policy test).
func (c *Console) policies(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Policy == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no policy engine"))
		return
	}
	set := c.opts.Policy.Policies()
	data := map[string]any{"Policies": set.Policies(), "Findings": policy.ValidatePolicies(set)}
	q := r.URL.Query()
	if q.Get("capability") != "" {
		data["Test"] = q
		rep, err := c.testPolicy(r, q)
		if err != nil {
			data["TestError"] = err.Error()
		} else {
			data["Report"] = rep
		}
	}
	c.render(w, r, s, http.StatusOK, "policies", data)
}

// testPolicy replays the request of q: principal, tier, capability, args
// (a JSON object).
func (c *Console) testPolicy(r *http.Request, q url.Values) (*policy.TestReport, error) {
	tenant, agent, err := policy.ParsePrincipalID(q.Get("principal"))
	if err != nil {
		return nil, err
	}
	tier := skill.T3
	if t := q.Get("tier"); t != "" {
		if tier, err = skill.ParseAgentTier(t); err != nil {
			return nil, err
		}
	}
	ref, err := c.opts.Policy.ResolveCapability(q.Get("capability"))
	if err != nil {
		return nil, err
	}
	args := map[string]any{}
	if a := strings.TrimSpace(q.Get("args")); a != "" {
		d := json.NewDecoder(strings.NewReader(a))
		d.UseNumber()
		if err := d.Decode(&args); err != nil {
			return nil, fmt.Errorf("args: a JSON object: %v", err)
		}
	}
	p := capability.Principal{Tenant: tenant, Agent: agent, Tier: tier}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &policy.TestReport{Principal: p, Capability: ref.String(), Args: args, Decision: c.opts.Policy.Test(r.Context(), p, ref, args)}, nil
}
