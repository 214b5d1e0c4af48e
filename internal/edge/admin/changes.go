package admin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/change"
)

// changesPage lists the changes queue: what waits for a human first, then
// what was decided.
func (c *Console) changesPage(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Changes == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no changes queue"))
		return
	}
	items, err := c.opts.Changes.List(r.Context(), true)
	if err != nil {
		c.fail(w, r, s, http.StatusInternalServerError, err)
		return
	}
	var pending, decided []change.Item
	for _, it := range items {
		if it.Pending() {
			pending = append(pending, it)
		} else {
			decided = append(decided, it)
		}
	}
	c.render(w, r, s, http.StatusOK, "changes", map[string]any{"Pending": pending, "Decided": decided})
}

// showChange is one change with its proposal and the decision forms.
func (c *Console) showChange(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderChange(w, r, s, http.StatusOK, r.URL.Query().Get("id"), "")
}

func (c *Console) renderChange(w http.ResponseWriter, r *http.Request, s *session, status int, id, problem string) {
	if c.opts.Changes == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no changes queue"))
		return
	}
	it, err := c.opts.Changes.Get(r.Context(), id)
	if err != nil {
		c.fail(w, r, s, changeStatus(err), err)
		return
	}
	c.render(w, r, s, status, "change", map[string]any{"C": it, "Problem": problem})
}

// changeAction applies or rejects a change from its page's forms, the
// same call as `skillgate changes approve|reject`.
func (c *Console) changeAction(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Changes == nil {
		c.fail(w, r, s, http.StatusNotFound, errors.New("this server has no changes queue"))
		return
	}
	id, why := r.PostFormValue("id"), r.PostFormValue("why")
	var it change.Item
	var err error
	switch op := r.PathValue("op"); op {
	case "approve":
		var o change.ApplyOptions
		if smoke := strings.TrimSpace(r.PostFormValue("smoke")); smoke != "" {
			o.SmokeCall, err = change.ParseSmokeCall(smoke)
		}
		if err == nil {
			it, err = c.opts.Changes.ApproveWith(r.Context(), id, why, s.actor(), o)
		}
	case "reject":
		it, err = c.opts.Changes.Reject(r.Context(), id, why, s.actor())
	default:
		c.fail(w, r, s, http.StatusNotFound, fmt.Errorf("unknown change operation %q: approve or reject", op))
		return
	}
	if err != nil {
		status := changeStatus(err)
		if status == http.StatusNotFound || status == http.StatusInternalServerError {
			c.fail(w, r, s, status, err)
			return
		}
		c.renderChange(w, r, s, status, id, err.Error())
		return
	}
	done := fmt.Sprintf("Change %s is %s.", it.ID, it.State)
	if it.Update != nil {
		http.Redirect(w, r, Prefix+"/installs/review?name="+url.QueryEscape(it.Update.Ref)+"&done="+url.QueryEscape(done), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Prefix+"/changes/show?id="+url.QueryEscape(it.ID)+"&done="+url.QueryEscape(done), http.StatusSeeOther)
}

// changeStatus is the HTTP status of a changes queue error (500 for an
// internal one).
func changeStatus(err error) int {
	if status, ok := change.HTTPStatus(err); ok {
		return status
	}
	return http.StatusInternalServerError
}
