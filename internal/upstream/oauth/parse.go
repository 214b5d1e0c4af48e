package oauth

import (
	"bytes"
	"encoding/json"
)

// maxErrorBody bounds the error response parseOAuthError reads.
const maxErrorBody = 16 << 10

// oauthError is an OAuth error response (RFC 6749 §5.2, RFC 7009 §2.2.1).
type oauthError struct {
	Code        string
	Description string
}

// parseOAuthError reads an error response body: a JSON object whose
// "error" is a non-empty string of the characters RFC 6749 allows
// (%x20-21 / %x23-5B / %x5D-7E) and whose optional "error_description"
// is a string of the same characters. Anything else, including a body
// over maxErrorBody bytes, is not an OAuth error (ok false). Keys match
// exactly (case-sensitively), and other members are ignored.
func parseOAuthError(body []byte) (e oauthError, ok bool) {
	if len(body) > maxErrorBody {
		return oauthError{}, false
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil || dec.More() {
		return oauthError{}, false
	}
	code, ok := oauthString(raw["error"])
	if !ok || code == "" {
		return oauthError{}, false
	}
	e.Code = code
	if d, present := raw["error_description"]; present {
		if e.Description, ok = oauthString(d); !ok {
			return oauthError{}, false
		}
	}
	return e, true
}

// oauthString decodes a JSON string made only of RFC 6749's error
// characters; a missing member, a non-string or another character fails.
func oauthString(m json.RawMessage) (string, bool) {
	if m == nil {
		return "", false
	}
	var s string
	if err := json.Unmarshal(m, &s); err != nil {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x20 || b == 0x22 || b == 0x5c || b > 0x7e {
			return "", false
		}
	}
	return s, true
}
