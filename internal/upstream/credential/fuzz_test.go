package credential

import (
	"strings"
	"testing"
)

// FuzzDecode feeds the decrypted-store reader arbitrary documents: it never
// panics, and what it accepts encodes back to a document it reads to the
// same table.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"credentials":[{"name":"GITHUB_TOKEN","tenant":"acme","value":"t"}]}`))
	f.Add([]byte(`{"version":1,"credentials":[{"name":"A","tenant":"acme","agent":"drafter","value":"x"},{"name":"A","tenant":"acme","value":"y"}]}`))
	f.Add([]byte(`{"version":1,"credentials":[{"name":"A","tenant":"acme","value":"x"},{"name":"A","tenant":"acme","value":"y"}]}`))
	f.Add([]byte(`{"version":2,"credentials":[]}`))
	f.Add([]byte(`{"version":1,"credentials":[{"name":"a\nb","tenant":"acme","value":"x"}]}`))
	f.Add([]byte(`{"version":1,"version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := decode(data)
		if err != nil {
			return
		}
		b, err := tab.encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := decode(b)
		if err != nil {
			t.Fatalf("re-reading the encoded table: %v", err)
		}
		if len(again) != len(tab) {
			t.Fatalf("round trip: %d entries, want %d", len(again), len(tab))
		}
		for k, v := range tab {
			if again[k] != v {
				t.Fatalf("round trip changed %v", k)
			}
		}
	})
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"version":2,"credentials":[]}`, "version 2 is not supported (this skillgate reads version 1)"},
		{`{"version":1,"credentials":[{"name":"A","tenant":"acme","value":"x"},{"name":"A","tenant":"acme","value":"y"}]}`,
			"credentials[1]: A for tenant acme appears twice"},
		{`{"version":1,"credentials":[{"name":"a","tenant":"acme","value":"x"}]}`, `credentials[0].name: invalid credential name: "a"`},
		{`{"version":1,"credentials":[{"name":"A","tenant":"","value":"x"}]}`, "credentials[0] (A): invalid credential scope: a tenant is required"},
		{`{"version":1,"credentials":[{"name":"A","tenant":"acme","value":""}]}`, "credentials[0] (A): invalid credential value: the value is empty"},
		{`{"version":1,"credentials":[],"extra":1}`, "not a credential store document"},
	} {
		_, err := decode([]byte(tc.doc))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("decode(%s) = %v, want prefix %q", tc.doc, err, tc.want)
		}
	}
}
