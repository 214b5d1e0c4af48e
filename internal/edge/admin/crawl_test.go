package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// crawlForm is one way to submit a form of a page: the form and one of
// its submit buttons.
type crawlForm struct {
	Key    string `json:"key"`
	Action string `json:"action"`
	Danger bool   `json:"danger"`
}

// formsJS lists the submit buttons of the page's forms, each with a key
// naming it (method, action, hidden values but the CSRF token, button
// text) that submitJS finds it by.
const formsJS = `(() => {
  const keyed = [];
  for (const f of document.forms) {
    const hidden = Array.from(f.querySelectorAll('input[type=hidden]')).filter(e => e.name !== 'csrf').map(e => e.name + '=' + e.value).join('&');
    for (const b of f.querySelectorAll('button')) {
      if (b.type !== 'submit') continue;
      keyed.push({key: f.method + ' ' + f.getAttribute('action') + ' ' + hidden + ' ' + b.textContent.trim(), action: f.getAttribute('action'), danger: b.classList.contains('danger'), form: f, button: b});
    }
  }
  return keyed;
})()`

// crawlValues are what the crawl types into a form's empty fields by
// name; other required fields get a sentence long enough for a reason.
var crawlValues = map[string]string{"principal": "acme/crawler", "capability": "tools/fs:fs/delete_file", "uses": "1", "expires": "1h"}

// crawl visits the console in the browser from start, following every
// same-origin link (each must answer below 400) and submitting every
// form of each page it visits (each must answer below 400). Forms are
// submitted one at a time, the page loaded again after each, until none
// is left that was not submitted: first those whose action was not
// submitted yet on any page, then from the bottom of the page up, forms
// marked dangerous last. A form the state reached no longer offers (a
// rejected install is not approved) is not submitted; skip names the
// actions never submitted (signing out). Empty fields are filled as an
// operator would (crawlValues; the first choice of a select).
func crawl(t *testing.T, b context.Context, c *console, start []string, skip ...string) {
	t.Helper()
	visited := map[string]bool{}
	submitted := map[string]bool{}
	actions := map[string]bool{}
	queue := slices.Clone(start)
	csrfClient := false
	for len(queue) > 0 && len(visited) < 300 {
		u := queue[0]
		queue = queue[1:]
		if visited[u] {
			continue
		}
		visited[u] = true
		if strings.HasSuffix(strings.SplitN(u, "?", 2)[0], ".jsonl") {
			// A download: fetched, not shown.
			if !csrfClient {
				c.signIn(t, "sgt_admin")
				csrfClient = true
			}
			if status, _, _ := c.get(t, u); status != http.StatusOK {
				t.Errorf("link %s: %d", u, status)
			}
			continue
		}
		if status := navigate(t, b, c.url+u); status >= 400 {
			t.Errorf("link %s: %d", u, status)
			continue
		}
		var hrefs []string
		if err := chromedp.Run(b, chromedp.Evaluate(`Array.from(document.querySelectorAll('a[href]')).map(a => a.href)`, &hrefs)); err != nil {
			t.Fatal(err)
		}
		for _, h := range hrefs {
			h, _, _ = strings.Cut(h, "#")
			if rest, ok := strings.CutPrefix(h, c.url); ok && strings.HasPrefix(rest, "/admin") && !visited[rest] {
				queue = append(queue, rest)
			}
		}
		for {
			var forms []crawlForm
			if err := chromedp.Run(b, chromedp.Evaluate(formsJS+`.map(k => ({key: k.key, action: k.action, danger: k.danger}))`, &forms)); err != nil {
				t.Fatal(err)
			}
			forms = slices.DeleteFunc(forms, func(f crawlForm) bool { return submitted[f.Key] || slices.Contains(skip, f.Action) })
			if len(forms) == 0 {
				break
			}
			slices.Reverse(forms)
			slices.SortStableFunc(forms, func(x, y crawlForm) int {
				rank := func(f crawlForm) int {
					r := 0
					if actions[f.Action] {
						r += 2
					}
					if f.Danger {
						r++
					}
					return r
				}
				return rank(x) - rank(y)
			})
			f := forms[0]
			submitted[f.Key], actions[f.Action] = true, true
			key, _ := json.Marshal(f.Key)
			values, _ := json.Marshal(crawlValues)
			js := `(() => {
  const k = ` + formsJS + `.find(k => k.key === ` + string(key) + `);
  const values = ` + string(values) + `;
  for (const el of k.form.elements) {
    if (el.type === 'hidden' || el.type === 'submit' || el.type === 'checkbox' || el.value) continue;
    if (el.tagName === 'SELECT') { const o = Array.from(el.options).find(o => o.value); if (o) el.value = o.value; continue; }
    if (values[el.name] !== undefined) el.value = values[el.name]; else if (el.required) el.value = 'submitted by the console crawl of the browser test';
  }
  k.button.click();
  return true;
})()`
			status, err := respond(b, chromedp.Evaluate(js, nil))
			if err != nil {
				t.Fatalf("form %q on %s: %v", f.Key, u, err)
			}
			if status >= 400 {
				var problem string
				_ = chromedp.Run(b, chromedp.Evaluate(`(document.querySelector('.problem') || document.body).innerText.slice(0, 400)`, &problem))
				t.Errorf("form %q on %s: %d: %s", f.Key, u, status, problem)
			}
			if status := navigate(t, b, c.url+u); status >= 400 {
				t.Errorf("%s after submitting %q: %d", u, f.Key, status)
				break
			}
		}
	}
	t.Logf("crawl: %d pages and links, %d form submissions", len(visited), len(submitted))
}

// navigate loads u and returns its HTTP status.
func navigate(t *testing.T, b context.Context, u string) int {
	t.Helper()
	status, err := respond(b, chromedp.Navigate(u))
	if err != nil {
		t.Fatalf("navigate to %s: %v", u, err)
	}
	return status
}

// respond runs a that loads a page (a navigation, a click), and returns
// the page's HTTP status.
func respond(b context.Context, a chromedp.Action) (int, error) {
	ctx, cancel := context.WithTimeout(b, 30*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, a)
	if err != nil {
		return 0, err
	}
	return int(resp.Status), nil
}
