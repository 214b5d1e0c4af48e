package credential

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// secretsIn collects the values of a document's secret fields (entries'
// values, connections' secrets and tokens), read loosely, so that the
// fuzz target can check no error repeats them.
func secretsIn(data []byte) []string {
	var doc struct {
		Credentials []struct {
			Value string `json:"value"`
		} `json:"credentials"`
		Connections []struct {
			Secret string `json:"secret"`
			OAuth  *struct {
				AccessToken  string `json:"access_token"`
				RefreshToken string `json:"refresh_token"`
				ClientSecret string `json:"client_secret"`
			} `json:"oauth"`
		} `json:"connections"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []string
	for _, e := range doc.Credentials {
		out = append(out, e.Value)
	}
	for _, c := range doc.Connections {
		out = append(out, c.Secret)
		if c.OAuth != nil {
			out = append(out, c.OAuth.AccessToken, c.OAuth.RefreshToken, c.OAuth.ClientSecret)
		}
	}
	return out
}

// FuzzDecode feeds the decrypted-store reader arbitrary documents: it never
// panics, its errors never repeat a secret field's value, and what it
// accepts encodes to a document it reads back to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"credentials":[{"name":"GITHUB_TOKEN","tenant":"acme","value":"t"}]}`))
	f.Add([]byte(`{"version":1,"credentials":[{"name":"A","tenant":"acme","agent":"drafter","value":"x"},{"name":"A","tenant":"acme","value":"y"}]}`))
	f.Add([]byte(`{"version":1,"credentials":[{"name":"A","tenant":"acme","value":"x"},{"name":"A","tenant":"acme","value":"y"}]}`))
	f.Add([]byte(`{"version":2,"credentials":[]}`))
	f.Add([]byte(`{"version":1,"credentials":[{"name":"a\nb","tenant":"acme","value":"x"}]}`))
	f.Add([]byte(`{"version":1,"version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decode(data)
		if err != nil {
			for _, s := range secretsIn(data) {
				if len(s) >= 8 && strings.Contains(err.Error(), s) {
					t.Fatalf("the error repeats a secret: %v", err)
				}
			}
			return
		}
		b, err := c.encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := decode(b)
		if err != nil {
			t.Fatalf("re-reading the encoded store: %v\n%s", err, b)
		}
		if len(again.creds) != len(c.creds) || len(again.conns) != len(c.conns) {
			t.Fatalf("round trip: %d entries %d connections, want %d %d", len(again.creds), len(again.conns), len(c.creds), len(c.conns))
		}
		for k, v := range c.creds {
			if again.creds[k] != v {
				t.Fatalf("round trip changed %v", k)
			}
		}
		b2, err := again.encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b, b2)
		}
	})
}
