package oauth

import (
	"testing"
	"unicode/utf8"
)

// FuzzParseOAuthError holds parseOAuthError, the one parser of outside
// input this package writes itself: it never panics, and what it accepts
// is a non-empty error code and a description made only of RFC 6749's
// error characters, from a body within the bound. The seed corpus is in
// testdata/fuzz/FuzzParseOAuthError.
func FuzzParseOAuthError(f *testing.F) {
	for _, s := range []string{
		`{"error":"invalid_grant"}`,
		`{"error":"invalid_grant","error_description":"token expired"}`,
		`{"error":"","error_description":"x"}`,
		`{"Error":"invalid_grant"}`,
		`{"error":"a\u0000b"}`,
		`{"error":"bad\"quote"}`,
		`{"error":"ok","error_description":7}`,
		`{"error":"x"} {"error":"y"}`,
		`["error"]`,
		`{"error":"x","error":"y\n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e, ok := parseOAuthError(body)
		if !ok {
			if e != (oauthError{}) {
				t.Fatalf("refused body returned %+v", e)
			}
			return
		}
		if len(body) > maxErrorBody || e.Code == "" {
			t.Fatalf("accepted %d bytes with code %q", len(body), e.Code)
		}
		for _, s := range []string{e.Code, e.Description} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q", s)
			}
			for i := 0; i < len(s); i++ {
				if b := s[i]; b < 0x20 || b == '"' || b == '\\' || b > 0x7e {
					t.Fatalf("character %#x outside RFC 6749's set in %q", b, s)
				}
			}
		}
	})
}

// TestParseOAuthError keeps the decisions on the seeds exact.
func TestParseOAuthError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body     string
		ok       bool
		code     string
		describe string
	}{
		{`{"error":"invalid_grant"}`, true, "invalid_grant", ""},
		{`{"error":"invalid_grant","error_description":"token expired","other":[1]}`, true, "invalid_grant", "token expired"},
		{`{"error":""}`, false, "", ""},
		{`{"Error":"invalid_grant"}`, false, "", ""},
		{`{"error":"a\u0000b"}`, false, "", ""},
		{`{"error":"bad\"quote"}`, false, "", ""},
		{`{"error":"ok","error_description":7}`, false, "", ""},
		{`{"error":"x"} {"error":"y"}`, false, "", ""},
		{`["error"]`, false, "", ""},
		{`{"error":"x","error_description":"é"}`, false, "", ""},
		{`not json`, false, "", ""},
	} {
		e, ok := parseOAuthError([]byte(tc.body))
		if ok != tc.ok || e.Code != tc.code || e.Description != tc.describe {
			t.Errorf("%s: got %+v %t, want %q %q %t", tc.body, e, ok, tc.code, tc.describe, tc.ok)
		}
	}
}
