package credential_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// envChild makes the test binary a child that sets one credential: the
// cross-process concurrency test runs it twice at once.
const envChild = "CREDENTIAL_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(envChild); spec != "" {
		// spec is "dir|name|tenant|count"
		parts := strings.Split(spec, "|")
		s, err := credential.Open(context.Background(), parts[0], credential.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var n int
		fmt.Sscan(parts[3], &n)
		for i := range n {
			if err := s.Set(context.Background(), fmt.Sprintf("%s_%d", parts[1], i), credential.Scope{Tenant: parts[2]}, "v"); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func open(t *testing.T, dir string, opts credential.Options) *credential.Store {
	t.Helper()
	s, err := credential.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTripAndResolution(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	env := map[string]string{"GITHUB_TOKEN": "from-env", "ONLY_ENV": "env-only", "SKILLGATE_CREDENTIAL_KEY": "AGE-SECRET-KEY-1X", "EMPTY": "",
		"PGPASSWORD": "db-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret"}
	// The operator lets the environment answer these names only
	// (credentials.from_environment); a reserved name is ignored even if
	// listed.
	opts := credential.Options{Environ: func(n string) string { return env[n] },
		FromEnvironment: []string{"GITHUB_TOKEN", "ONLY_ENV", "EMPTY", "SKILLGATE_CREDENTIAL_KEY"}}
	s := open(t, dir, opts)
	for _, e := range []struct {
		name  string
		scope credential.Scope
		value string
	}{
		{"GITHUB_TOKEN", credential.Scope{Tenant: "acme"}, "acme-tenant"},
		{"GITHUB_TOKEN", credential.Scope{Tenant: "acme", Agent: "drafter"}, "acme-drafter"},
		{"GITHUB_TOKEN", credential.Scope{Tenant: "globex"}, "globex-tenant"},
		{"GITLAB_TOKEN", credential.Scope{Tenant: "acme", Agent: "drafter"}, "gl-drafter"},
	} {
		if err := s.Set(ctx, e.name, e.scope, e.value); err != nil {
			t.Fatal(err)
		}
	}
	// A second process's view: a fresh store on the same directory.
	s2 := open(t, dir, opts)
	p := func(tenant, agent string) capability.Principal {
		return capability.Principal{Tenant: tenant, Agent: agent, Tier: "T3"}
	}
	for _, tc := range []struct {
		p     capability.Principal
		name  string
		want  string
		found bool
	}{
		{p("acme", "drafter"), "GITHUB_TOKEN", "acme-drafter", true}, // agent entry first
		{p("acme", "reviewer"), "GITHUB_TOKEN", "acme-tenant", true}, // then tenant
		{p("globex", "drafter"), "GITHUB_TOKEN", "globex-tenant", true},
		{p("initech", "x"), "GITHUB_TOKEN", "from-env", true}, // then the environment
		{p("acme", "drafter"), "GITLAB_TOKEN", "gl-drafter", true},
		{p("acme", "reviewer"), "GITLAB_TOKEN", "", false},
		{p("acme", "reviewer"), "ONLY_ENV", "env-only", true},
		{p("acme", "reviewer"), "NOWHERE", "", false},
		{p("acme", "reviewer"), "EMPTY", "", false},                    // empty is unset
		{p("acme", "reviewer"), "SKILLGATE_CREDENTIAL_KEY", "", false}, // skillgate's own, never
		{p("acme", "reviewer"), "PGPASSWORD", "", false},               // set, but not listed
		{p("acme", "reviewer"), "AWS_SECRET_ACCESS_KEY", "", false},    // set, but not listed
	} {
		for i, st := range []*credential.Store{s, s2} {
			got, ok := st.Lookup(tc.p)(tc.name)
			if got != tc.want || ok != tc.found {
				t.Errorf("store %d: %s %s = %q, %v; want %q, %v", i, tc.p, tc.name, got, ok, tc.want, tc.found)
			}
		}
	}
	if got := s2.Missing(p("acme", "reviewer"), []string{"GITHUB_TOKEN", "GITLAB_TOKEN", "NOWHERE"}); fmt.Sprint(got) != "[GITLAB_TOKEN NOWHERE]" {
		t.Errorf("Missing = %v", got)
	}
	list, err := s2.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []credential.Entry{
		{Name: "GITHUB_TOKEN", Scope: credential.Scope{Tenant: "acme"}},
		{Name: "GITHUB_TOKEN", Scope: credential.Scope{Tenant: "acme", Agent: "drafter"}},
		{Name: "GITLAB_TOKEN", Scope: credential.Scope{Tenant: "acme", Agent: "drafter"}},
		{Name: "GITHUB_TOKEN", Scope: credential.Scope{Tenant: "globex"}},
	}
	if fmt.Sprint(list) != fmt.Sprint(want) {
		t.Errorf("List = %v\nwant %v", list, want)
	}

	// Remove, and a change made by another store is seen after Reload.
	gen := s.Generation()
	if err := s2.Remove(ctx, "GITHUB_TOKEN", credential.Scope{Tenant: "acme", Agent: "drafter"}); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Reload(ctx); err != nil || !changed {
		t.Fatalf("Reload after another store's write = %v, %v", changed, err)
	}
	if s.Generation() == gen {
		t.Error("generation did not move after a reload that found a change")
	}
	if changed, err := s.Reload(ctx); err != nil || changed {
		t.Fatalf("second Reload = %v, %v; want no change", changed, err)
	}
	if got, _ := s.Lookup(p("acme", "drafter"))("GITHUB_TOKEN"); got != "acme-tenant" {
		t.Errorf("after rm, acme/drafter GITHUB_TOKEN = %q, want the tenant's", got)
	}
	err = s.Remove(ctx, "GITHUB_TOKEN", credential.Scope{Tenant: "acme", Agent: "drafter"})
	if !errors.Is(err, credential.ErrNotFound) || err.Error() != "credential not found: no GITHUB_TOKEN for agent acme/drafter (list them with skillgate credential ls)" {
		t.Errorf("second rm = %v", err)
	}
}

func TestRefusedInput(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), credential.Options{})
	acme := credential.Scope{Tenant: "acme"}
	for _, tc := range []struct {
		name  string
		scope credential.Scope
		value string
		is    error
		msg   string
	}{
		{"GITHUB_TOKEN\nEVIL", acme, "v", credential.ErrInvalidName,
			`invalid credential name: "GITHUB_TOKEN\nEVIL": a name is an upper-case letter followed by upper-case letters, digits and '_', at most 128 bytes (e.g. GITHUB_TOKEN)`},
		{"github_token", acme, "v", credential.ErrInvalidName,
			`invalid credential name: "github_token": a name is an upper-case letter followed by upper-case letters, digits and '_', at most 128 bytes (e.g. GITHUB_TOKEN)`},
		{"", acme, "v", credential.ErrInvalidName, "invalid credential name: the name is empty; use upper-case letters, digits and '_', e.g. GITHUB_TOKEN"},
		{"T" + strings.Repeat("A", 128), acme, "v", credential.ErrInvalidName, ""},
		{"TOKEN", acme, strings.Repeat("x", credential.MaxValueBytes+1), credential.ErrInvalidValue,
			"invalid credential value: the value is 65537 bytes; the limit is 65536"},
		{"TOKEN", acme, "a\x00b", credential.ErrInvalidValue, "invalid credential value: the value contains a NUL byte"},
		{"TOKEN", acme, "", credential.ErrInvalidValue, "invalid credential value: the value is empty"},
		{"TOKEN", acme, "\xff", credential.ErrInvalidValue, "invalid credential value: the value is not valid UTF-8"},
		{"TOKEN", credential.Scope{}, "v", credential.ErrInvalidScope, "invalid credential scope: a tenant is required (--tenant)"},
		{"TOKEN", credential.Scope{Tenant: "ac me"}, "v", credential.ErrInvalidScope, ""},
		{"TOKEN", credential.Scope{Tenant: "acme", Agent: "a\nb"}, "v", credential.ErrInvalidScope, ""},
	} {
		err := s.Set(ctx, tc.name, tc.scope, tc.value)
		if !errors.Is(err, tc.is) || (tc.msg != "" && err.Error() != tc.msg) {
			t.Errorf("Set(%q, %v) = %v, want %v %q", tc.name, tc.scope, err, tc.is, tc.msg)
		}
	}
	if list, _ := s.List(ctx); len(list) != 0 {
		t.Errorf("refused sets stored %v", list)
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Errorf("refused sets wrote the store: %v", err)
	}
}

func TestFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	dir := filepath.Join(t.TempDir(), "data")
	s := open(t, dir, credential.Options{})
	if err := s.Set(context.Background(), "TOKEN", credential.Scope{Tenant: "acme"}, "secret-value-123"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{".": 0o700, credential.StoreFile: 0o600, credential.KeyFile: 0o600, credential.LockFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", name, fi.Mode().Perm(), want)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, credential.StoreFile))
	if bytes.Contains(b, []byte("secret-value-123")) || !bytes.HasPrefix(b, []byte("age-encryption.org/v1\n")) {
		t.Errorf("store file is not an age file, or holds the value in clear")
	}
	// Only the store, its key and its lock are left: no temporary files.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("data dir holds %d files, want 3", len(ents))
	}
	// A key file others can read is refused.
	os.Chmod(filepath.Join(dir, credential.KeyFile), 0o644)
	_, err := credential.Open(context.Background(), dir, credential.Options{})
	if !errors.Is(err, credential.ErrKey) || !strings.Contains(err.Error(), "run: chmod 600") {
		t.Errorf("open with a 0644 key = %v", err)
	}
}

func TestUnreadableStoreRefused(t *testing.T) {
	ctx := context.Background()
	acme := credential.Scope{Tenant: "acme"}
	setup := func(t *testing.T) (string, []byte) {
		dir := t.TempDir()
		s := open(t, dir, credential.Options{})
		if err := s.Set(ctx, "TOKEN", acme, "secret-1"); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(s.Path())
		return dir, b
	}
	other, _ := age.GenerateX25519Identity()
	for _, tc := range []struct {
		name    string
		corrupt func(dir string, orig []byte)
		opts    credential.Options
		is      error
		want    string
	}{
		{"flipped byte", func(dir string, orig []byte) {
			b := bytes.Clone(orig)
			b[len(b)-5] ^= 0xff
			os.WriteFile(filepath.Join(dir, credential.StoreFile), b, 0o600)
		}, credential.Options{}, credential.ErrUnreadable, "is corrupted"},
		{"truncated", func(dir string, orig []byte) {
			os.WriteFile(filepath.Join(dir, credential.StoreFile), orig[:len(orig)/2], 0o600)
		}, credential.Options{}, credential.ErrUnreadable, "is corrupted"},
		{"not age", func(dir string, orig []byte) {
			os.WriteFile(filepath.Join(dir, credential.StoreFile), []byte(`{"version":1,"credentials":[]}`), 0o600)
		}, credential.Options{}, credential.ErrUnreadable, "is corrupted"},
		{"wrong key", func(string, []byte) {}, credential.Options{Identity: other.String(), IdentitySource: "SKILLGATE_CREDENTIAL_KEY"},
			credential.ErrUnreadable, "was encrypted with another key than SKILLGATE_CREDENTIAL_KEY"},
		{"key file lost", func(dir string, _ []byte) { os.Remove(filepath.Join(dir, credential.KeyFile)) },
			credential.Options{}, credential.ErrKey, "exists but there is no key to decrypt it"},
		{"malformed identity", func(string, []byte) {}, credential.Options{Identity: "AGE-SECRET-KEY-1NOPE", IdentitySource: "SKILLGATE_CREDENTIAL_KEY"},
			credential.ErrKey, "SKILLGATE_CREDENTIAL_KEY is not an age X25519 identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, orig := setup(t)
			tc.corrupt(dir, orig)
			before, _ := os.ReadFile(filepath.Join(dir, credential.StoreFile))
			_, err := credential.Open(ctx, dir, tc.opts)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v; want %v containing %q", err, tc.is, tc.want)
			}
			if tc.is == credential.ErrUnreadable && !strings.Contains(err.Error(), filepath.Join(dir, credential.StoreFile)) {
				t.Errorf("error does not name the file: %v", err)
			}
			if strings.Contains(err.Error(), "secret-1") {
				t.Errorf("error holds the value: %v", err)
			}
			after, _ := os.ReadFile(filepath.Join(dir, credential.StoreFile))
			if !bytes.Equal(before, after) {
				t.Error("the damaged store was changed")
			}
		})
	}

	// A store opened while the file was fine refuses a later Set once
	// another hand damaged it, and leaves the file as it is.
	dir, orig := setup(t)
	s := open(t, dir, credential.Options{})
	bad := bytes.Clone(orig)
	bad[len(bad)-5] ^= 0xff
	os.WriteFile(filepath.Join(dir, credential.StoreFile), bad, 0o600)
	err := s.Set(ctx, "OTHER", acme, "secret-2")
	if !errors.Is(err, credential.ErrUnreadable) || !strings.Contains(err.Error(), "will not overwrite it") {
		t.Fatalf("Set over a damaged store = %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, credential.StoreFile)); !bytes.Equal(after, bad) {
		t.Fatal("Set overwrote a damaged store")
	}
	if _, err := s.Reload(ctx); !errors.Is(err, credential.ErrUnreadable) {
		t.Fatalf("Reload of a damaged store = %v", err)
	}
	// The snapshot read before the damage still serves lookups.
	if v, ok := s.Resolve(capability.Principal{Tenant: "acme", Agent: "a"}, "TOKEN"); !ok || v != "secret-1" {
		t.Errorf("lookup after a failed reload = %q, %v", v, ok)
	}
}

func TestSuppliedIdentity(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	id, _ := age.GenerateX25519Identity()
	opts := credential.Options{Identity: id.String(), IdentitySource: "SKILLGATE_CREDENTIAL_KEY"}
	s := open(t, dir, opts)
	if err := s.Set(ctx, "TOKEN", credential.Scope{Tenant: "acme"}, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, credential.KeyFile)); !os.IsNotExist(err) {
		t.Errorf("a key file was written although the identity was supplied: %v", err)
	}
	if v, ok := open(t, dir, opts).Resolve(capability.Principal{Tenant: "acme", Agent: "x"}, "TOKEN"); !ok || v != "v1" {
		t.Errorf("reopened with the identity: %q %v", v, ok)
	}
	if _, err := credential.Open(ctx, dir, credential.Options{}); !errors.Is(err, credential.ErrKey) {
		t.Errorf("open without the identity = %v", err)
	}
}

// TestConcurrentProcesses runs two processes that each set 20 credentials
// at once; every entry of both is kept.
func TestConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, name := range []string{"ALPHA", "BETA"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|acme|%d", envChild, dir, name, n))
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("%s: %v\n%s", name, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := open(t, dir, credential.Options{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2*n {
		t.Fatalf("%d entries after two concurrent writers of %d each, want %d: %v", len(list), n, 2*n, list)
	}
}

// TestEnvironmentOnlyListed: the environment step answers only the names
// the operator listed, whatever else skillgate's environment holds.
func TestEnvironmentOnlyListed(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "gh", "PGPASSWORD": "pg", "HOME": "/root", "SKILLGATE_S3_SECRET_KEY": "s3"}
	getenv := func(n string) string { return env[n] }
	for _, tc := range []struct {
		allowed []string
		name    string
		want    string
		ok      bool
	}{
		{nil, "GITHUB_TOKEN", "", false},
		{[]string{}, "PGPASSWORD", "", false},
		{[]string{"GITHUB_TOKEN"}, "GITHUB_TOKEN", "gh", true},
		{[]string{"GITHUB_TOKEN"}, "PGPASSWORD", "", false},
		{[]string{"GITHUB_TOKEN"}, "HOME", "", false},
		{[]string{"SKILLGATE_S3_SECRET_KEY"}, "SKILLGATE_S3_SECRET_KEY", "", false},
		{[]string{"MISSING"}, "MISSING", "", false},
	} {
		got, ok := credential.Environment(getenv, tc.allowed)(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("allowed %v: %s = %q, %v; want %q, %v", tc.allowed, tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := credential.Environment(nil, []string{"GITHUB_TOKEN"})("GITHUB_TOKEN"); ok || got != "" {
		t.Errorf("nil getenv answered %q", got)
	}
}

func TestCheckFromEnvironment(t *testing.T) {
	const field = "credentials.from_environment"
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"GITHUB_TOKEN", "JIRA_TOKEN"}, ""},
		{[]string{"GITHUB_TOKEN", "github_token"}, `credentials.from_environment[1]: invalid credential name: "github_token": a name is an upper-case letter followed by upper-case letters, digits and '_', at most 128 bytes (e.g. GITHUB_TOKEN)`},
		{[]string{""}, `credentials.from_environment[0]: invalid credential name: the name is empty; use upper-case letters, digits and '_', e.g. GITHUB_TOKEN`},
		{[]string{"SKILLGATE_CREDENTIAL_KEY"}, `invalid credential name: credentials.from_environment[0]: SKILLGATE_CREDENTIAL_KEY is skillgate's own configuration, never a skill's credential; remove it`},
		{[]string{"A", "B", "A"}, `invalid credential name: credentials.from_environment[2]: A is listed twice; remove one`},
	} {
		err := credential.CheckFromEnvironment(field, tc.names)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, credential.ErrInvalidName) {
				t.Errorf("%v: %v is not ErrInvalidName", tc.names, err)
			}
		}
		if got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.names, got, tc.want)
		}
	}
}
