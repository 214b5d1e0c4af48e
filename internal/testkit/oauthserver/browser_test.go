package oauthserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
)

// TestBrowserAllow clicks the consent page's Allow in headless Chromium,
// as a person connecting an account does, and exchanges the code the
// browser delivered to the redirect_uri.
func TestBrowserAllow(t *testing.T) {
	t.Parallel()
	var chromium string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	as := oauthserver.New(t, nil)
	got := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Query():
		default:
		}
		_, _ = w.Write([]byte("connected"))
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/callback"
	cfg := &oauth2.Config{ClientID: register(t, as, redirect), RedirectURL: redirect, Scopes: []string{"openid", "offline_access"},
		Endpoint: oauth2.Endpoint{AuthURL: as.URL + "/authorize", TokenURL: as.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()

	actx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true))...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	err := chromedp.Run(ctx,
		chromedp.Navigate(cfg.AuthCodeURL("b1", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible("#allow", chromedp.ByID),
		chromedp.SetValue("#account", "carol", chromedp.ByID),
		chromedp.Click("#allow", chromedp.ByID),
	)
	if err != nil {
		t.Fatal(err)
	}
	var q url.Values
	select {
	case q = <-got:
	case <-ctx.Done():
		t.Fatal("the browser never reached the redirect_uri")
	}
	if q.Get("state") != "b1" || q.Get("code") == "" {
		t.Fatalf("callback state %q, code set %t", q.Get("state"), q.Get("code") != "")
	}
	tok, err := cfg.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token")
	}
	// the grant is for the account typed in the page
	resp, err := cfg.Client(t.Context(), tok).Get(as.URL + "/userinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct{ Sub string }
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || info.Sub != "carol" {
		t.Fatalf("userinfo sub %q (%v), want carol", info.Sub, err)
	}
}
