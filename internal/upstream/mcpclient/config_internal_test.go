package mcpclient

import (
	"errors"
	"reflect"
	"testing"
)

func TestExpandTemplates(t *testing.T) {
	t.Parallel()
	creds := map[string]string{
		"TOKEN":  "t0k",
		"NUL":    "a\x00b",
		"CRLF":   "a\r\nInjected: 1",
		"EMPTY":  "",
		"DOLLAR": "${TOKEN}", // a value is never expanded again
	}
	lookup := func(name string) (string, bool) { v, ok := creds[name]; return v, ok }
	tests := []struct {
		name    string
		field   string
		in      map[string]string
		lookup  CredentialLookup
		want    map[string]string
		wantIs  error
		wantErr string
	}{
		{
			name: "references and literals", field: "env",
			in:     map[string]string{"A": "${TOKEN}", "B": "Bearer ${TOKEN}!", "C": "plain", "D": "$${TOKEN}", "E": "${EMPTY}", "F": "${DOLLAR}", "G": "$5 $ {x}"},
			lookup: lookup,
			want:   map[string]string{"A": "t0k", "B": "Bearer t0k!", "C": "plain", "D": "${TOKEN}", "E": "", "F": "${TOKEN}", "G": "$5 $ {x}"},
		},
		{
			name: "missing credential", field: "env",
			in: map[string]string{"A": "${TOKEN}", "B": "${ABSENT}"}, lookup: lookup,
			wantIs: ErrMissingCredential, wantErr: "missing credential: env.B references ${ABSENT}, which is not set",
		},
		{
			name: "nil lookup", field: "headers",
			in:     map[string]string{"Authorization": "Bearer ${TOKEN}"},
			wantIs: ErrMissingCredential, wantErr: "missing credential: headers.Authorization references ${TOKEN}, which is not set",
		},
		{
			name: "NUL in an expanded value", field: "env",
			in: map[string]string{"A": "${NUL}"}, lookup: lookup,
			wantIs: ErrInvalidConfig, wantErr: "invalid mcp.json: env.A: an expanded credential contains a NUL byte or a line break",
		},
		{
			name: "line break in an expanded header", field: "headers",
			in: map[string]string{"X-A": "${CRLF}"}, lookup: lookup,
			wantIs: ErrInvalidConfig, wantErr: "invalid mcp.json: headers.X-A: an expanded credential contains a NUL byte or a line break",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := expandTemplates(tc.field, tc.in, tc.lookup)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, tc.wantIs) {
					t.Fatalf("error = %v; want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestBuildEnv(t *testing.T) {
	t.Parallel()
	o := (&Options{
		InheritEnv: []string{"PATH", "HOME", "UNSET"},
		Getenv: func(k string) (string, bool) {
			v, ok := map[string]string{"PATH": "/bin", "HOME": "/root", "SECRET": "x"}[k]
			return v, ok
		},
	}).resolve()
	got := buildEnv(o, map[string]string{"HOME": "/srv", "Z": "1", "A": "2"})
	want := []string{"PATH=/bin", "A=2", "HOME=/srv", "Z=1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("buildEnv = %q; want %q", got, want)
	}
	empty := (&Options{InheritEnv: []string{}}).resolve()
	if env := buildEnv(empty, nil); env == nil || len(env) != 0 {
		t.Errorf("buildEnv with nothing = %#v; want an empty, non-nil slice (nil would inherit everything)", env)
	}
}
