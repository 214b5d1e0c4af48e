package connection_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// auditLog keeps the records appended to it.
type auditLog struct {
	mu   sync.Mutex
	recs []audit.Record
	err  error
}

func (a *auditLog) Append(_ context.Context, rs ...audit.Record) ([]audit.Record, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return nil, a.err
	}
	a.recs = append(a.recs, rs...)
	return rs, nil
}

// lines renders the records as "actor action subject data".
func (a *auditLog) lines() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.recs {
		out = append(out, r.Actor+" "+r.Action+" "+r.Subject+" "+string(r.Data))
	}
	return out
}

// TestService: an operator connects, renames, makes default and revokes
// through the service; each change is audited in the operator's name,
// the connection is made by whoever started it, and no token reaches a
// record or an error.
func TestService(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, time.Hour)
	log := &auditLog{}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	svc := connection.NewService(e.store, connection.NewConnector(e.client, e.store, &connection.ConnectorOptions{Logger: e.log}),
		connection.New(e.store, e.client, &connection.Options{Logger: e.log}),
		func(_ context.Context, provider string) (string, error) {
			if provider != "remote" {
				return "", errors.New("no installed skill declares a remote server " + provider + " (list them with skillgate skill ls)")
			}
			return e.rs.URL, nil
		}, &connection.ServiceOptions{Audit: log, Now: func() time.Time { return now }, Logger: e.log})

	for _, tc := range []struct {
		name string
		key  credential.ConnectionKey
		want string
		is   error
	}{
		{"no tenant", credential.ConnectionKey{Provider: "remote", Account: "work"}, "invalid credential scope: a tenant is required (--tenant)", credential.ErrInvalidScope},
		{"bad account", credential.ConnectionKey{Scope: work.Scope, Provider: "remote", Account: "-x"}, `invalid connection: account "-x": use letters, digits, '.', '_', '-', '@' and '+', starting with a letter or digit, at most 64 bytes`, credential.ErrInvalidConnection},
		{"unknown provider", credential.ConnectionKey{Scope: work.Scope, Provider: "gitlab", Account: "work"}, "no remote server for the provider: gitlab: no installed skill declares a remote server gitlab (list them with skillgate skill ls)", connection.ErrNoServer},
	} {
		if _, err := svc.Start(ctx, tc.key, redirect, false, "operator:ops/alice@T0"); err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
			t.Errorf("%s: %v; want %s", tc.name, err, tc.want)
		}
	}

	bare := connection.NewService(e.store, connection.NewConnector(e.client, e.store, nil), connection.New(e.store, e.client, nil), nil, nil)
	if _, err := bare.Start(ctx, work, redirect, false, "x"); err == nil ||
		err.Error() != "no remote server for the provider: remote: this server resolves no provider to a remote server" {
		t.Errorf("without a resolver: %v", err)
	}

	authURL, err := svc.Start(ctx, work, redirect, true, "operator:ops/alice@T0")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := e.as.Authorize(ctx, http.DefaultClient, authURL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	info, err := svc.Complete(ctx, cb.Query())
	if err != nil {
		t.Fatal(err)
	}
	if info.ConnectionKey != work || info.State != credential.StateActive || !info.Default {
		t.Fatalf("connected %v", info)
	}
	if _, err := svc.Complete(ctx, cb.Query()); !errors.Is(err, connection.ErrUnknownFlow) {
		t.Fatalf("callback used twice: %v", err)
	}
	grant := e.grant(t, work).OAuth

	personal := work
	personal.Account = "personal"
	steps := []struct {
		name string
		do   func() error
		want string // the error, empty for none
	}{
		{"rename", func() error { return svc.Rename(ctx, work, "personal", "operator:ops/bob@T0") }, ""},
		{"rename a missing one", func() error { return svc.Rename(ctx, work, "other", "operator:ops/bob@T0") },
			"connection required: no remote account work for tenant acme (list them with skillgate connection ls)"},
		{"default", func() error { return svc.SetDefault(ctx, personal, "operator:ops/bob@T0") }, ""},
		{"revoke", func() error { return svc.Revoke(ctx, personal, false, "operator:ops/carol@T0") }, ""},
		{"forget", func() error { return svc.Revoke(ctx, personal, true, "operator:ops/carol@T0") }, ""},
		{"forget again", func() error { return svc.Revoke(ctx, personal, true, "operator:ops/carol@T0") },
			"connection required: no remote account personal for tenant acme (list them with skillgate connection ls)"},
	}
	var texts []string
	for _, s := range steps {
		err := s.do()
		got := ""
		if err != nil {
			got = err.Error()
			texts = append(texts, got)
		}
		if got != s.want {
			t.Errorf("%s: %q; want %q", s.name, got, s.want)
		}
	}
	if st := e.as.Stats(); st.Revocations == 0 {
		t.Errorf("the authorization server saw no revocation: %+v", st)
	}
	if list, err := svc.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("after forgetting: %v %v", list, err)
	}
	want := []string{
		`operator:ops/alice@T0 connection.connect remote {"account":"work","default":true,"issuer":"` + e.as.URL + `","scopes":["tools","offline_access"],"tenant":"acme"}`,
		`operator:ops/bob@T0 connection.rename remote {"account":"work","tenant":"acme","to":"personal"}`,
		`operator:ops/bob@T0 connection.default remote {"account":"personal","tenant":"acme"}`,
		`operator:ops/carol@T0 connection.revoke remote {"account":"personal","forgotten":false,"tenant":"acme"}`,
		`operator:ops/carol@T0 connection.revoke remote {"account":"personal","forgotten":true,"tenant":"acme"}`,
	}
	if got := log.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	e.noSecret(t, strings.Join(log.lines(), "\n")+strings.Join(texts, "\n"), *grant)

	// An audit log that refuses: the change is made, and the error says
	// it was not recorded.
	log.err = errors.New("audit store unreachable")
	if _, err := svc.Start(ctx, work, redirect, false, "operator:ops/alice@T0"); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetDefault(ctx, credential.ConnectionKey{Scope: work.Scope, Provider: "remote", Account: "nope"}, "x"); !errors.Is(err, credential.ErrNoConnection) {
		t.Fatalf("default of a missing connection: %v", err)
	}
	e.connect(t, work, "alice")
	if err := svc.SetDefault(ctx, work, "operator:ops/bob@T0"); err == nil ||
		err.Error() != "connection.default of remote account work for tenant acme is done but its audit record was not written: audit store unreachable" {
		t.Fatalf("unaudited change: %v", err)
	}
}
