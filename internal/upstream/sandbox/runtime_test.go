package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// TestMain lets the test binary stand for skillgate's helper: run as
// "sandbox-exec …", it does what `skillgate sandbox-exec` does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		err := sandbox.Exec(os.Args[2:], os.Environ())
		os.Stderr.WriteString("sandbox-exec: " + err.Error() + "\n")
		os.Exit(126)
	}
	os.Exit(m.Run())
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    sandbox.Mode
		wantErr string
	}{
		{"bubblewrap", sandbox.ModeBubblewrap, ""},
		{"none", sandbox.ModeNone, ""},
		{"off", "", `sandbox mode must be bubblewrap or none, not "off"`},
		{"", "", `sandbox mode must be bubblewrap or none, not ""`},
	}
	for _, tt := range tests {
		got, err := sandbox.ParseMode(tt.in)
		if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	got := sandbox.Limits{Processes: 10, OpenFiles: -1}.WithDefaults()
	want := sandbox.Limits{AddressSpace: 4 << 30, Processes: 10, OpenFiles: 0, FileSize: 1 << 30, CPUSeconds: 3600, TmpBytes: 256 << 20}
	if got != want {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
}

func TestExecUsage(t *testing.T) {
	policy := []string{sandbox.PolicyEnv + "={}"}
	for _, tc := range []struct {
		args, env []string
	}{{nil, policy}, {[]string{"--"}, policy}, {[]string{"x", "prog"}, policy}, {[]string{"--policy", "{}", "--", "prog"}, policy}} {
		if err := sandbox.Exec(tc.args, tc.env); !errors.Is(err, sandbox.ErrHelperUsage) || err.Error() != sandbox.ErrHelperUsage.Error() {
			t.Errorf("Exec(%q) = %v, want ErrHelperUsage", tc.args, err)
		}
	}
	// The policy comes from the environment, never from the command line.
	err := sandbox.Exec([]string{"--", "/bin/true"}, []string{"PATH=/bin"})
	if want := sandbox.ErrHelperUsage.Error() + ": " + sandbox.PolicyEnv + " is not set"; err == nil || err.Error() != want {
		t.Errorf("no policy: %v, want %s", err, want)
	}
	err = sandbox.Exec([]string{"--", "/bin/true"}, []string{sandbox.PolicyEnv + "={"})
	if !errors.Is(err, sandbox.ErrHelperUsage) || !strings.HasPrefix(err.Error(), sandbox.ErrHelperUsage.Error()+": "+sandbox.PolicyEnv+": ") {
		t.Errorf("bad policy: %v", err)
	}
}

func found(path string) (string, error) { return path, nil }

// TestRuntimeConfiner: who runs confined, who may not run at all, and
// what a confined server gets.
func TestRuntimeConfiner(t *testing.T) {
	data := t.TempDir()
	tree := filepath.Join(data, "imported", "d", "skill")
	os.MkdirAll(tree, 0o755)
	r := &sandbox.Runtime{
		StateRoot: filepath.Join(data, "sandbox"), Hide: []string{data}, Helper: []string{"/bin/skillgate", sandbox.HelperCommand},
		Modes:    map[string]sandbox.Mode{"acme/fp": sandbox.ModeNone, "acme/imp": sandbox.ModeNone},
		LookPath: found,
	}
	missing := &sandbox.Runtime{StateRoot: r.StateRoot, Hide: r.Hide, Helper: r.Helper, Modes: r.Modes,
		LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	tests := []struct {
		name      string
		r         *sandbox.Runtime
		s         sandbox.Server
		unconfine bool
		wantIs    error
		wantErr   string
	}{
		{"first_party set to none runs unconfined", r, sandbox.Server{Skill: "acme/fp", Version: "sha256:1", FirstParty: true}, true, nil, ""},
		{"imported set to none is refused", r, sandbox.Server{Skill: "acme/imp", Version: "sha256:1"}, false, sandbox.ErrNotAllowed,
			"sandbox: none is allowed only for first_party skills: acme/imp is imported (remove it from sandbox.skills in config.yaml)"},
		{"imported is confined", r, sandbox.Server{Skill: "acme/other", Version: "sha256:1", Dir: tree}, false, nil, ""},
		{"first_party not set is confined", r, sandbox.Server{Skill: "acme/fp2", Version: "sha256:1", FirstParty: true}, false, nil, ""},
		{"no bwrap", missing, sandbox.Server{Skill: "acme/other", Version: "sha256:1"}, false, sandbox.ErrUnavailable,
			"sandbox unavailable: bwrap not found; the servers of acme/other run only confined (install bubblewrap: apt-get install bubblewrap)"},
		{"a key that climbs out", r, sandbox.Server{Skill: "../x", Version: "sha256:1"}, false, nil,
			`sandbox: no state directory for skill "../x" version "sha256:1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.r.Confiner(tt.s)
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
					t.Fatalf("Confiner = %v, want %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tt.unconfine:
				if b != nil {
					t.Fatalf("Confiner = %+v, want unconfined", b)
				}
				return
			case b == nil:
				t.Fatal("Confiner = nil, want confined")
			}
			wantState := filepath.Join(data, "sandbox", tt.s.Skill, "sha256-1")
			if b.State != wantState || !slices.Equal(b.Helper, r.Helper) || b.Network != tt.s.Network {
				t.Fatalf("Bubblewrap = %+v", b)
			}
			st, err := os.Stat(wantState)
			if err != nil || st.Mode().Perm() != 0o700 {
				t.Fatalf("state directory: %v %v", st, err)
			}
		})
	}
}

// TestHelperConfines runs a shell through bwrap and the helper (the test
// binary, see TestMain): its limits, capabilities, HOME, what it may read
// (Landlock: not a directory outside the system's, its tree and its
// grants, though bwrap shows it read-only) and what it may write.
func TestHelperConfines(t *testing.T) {
	requireBwrap(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	tree := filepath.Join(data, "imported", "d", "skill")
	os.MkdirAll(tree, 0o755)
	os.WriteFile(filepath.Join(tree, "SKILL.md"), []byte("the skill\n"), 0o644)
	// A directory outside /tmp and the system's, visible read-only
	// through bwrap: only Landlock keeps it from the server.
	outside, err := os.MkdirTemp(filepath.Dir(self), "outside")
	if err != nil {
		t.Skip("no directory beside the test binary:", err)
	}
	defer os.RemoveAll(outside)
	work := t.TempDir()
	r := &sandbox.Runtime{
		StateRoot: filepath.Join(data, "sandbox"), Hide: []string{data}, Helper: []string{self, sandbox.HelperCommand},
		Limits: sandbox.Limits{OpenFiles: 64, AddressSpace: 1 << 32},
	}
	b, err := r.Confiner(sandbox.Server{Skill: "acme/x", Version: "sha256:1", Dir: tree, Args: []string{work}})
	if err != nil {
		t.Fatal(err)
	}
	script := `cat SKILL.md
echo "home=$HOME"
grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status | tr -s '\t ' ' '
grep -E 'Max (open files|address space|file size|processes)' /proc/self/limits | tr -s ' ' | cut -d' ' -f1-5
ls ` + outside + ` >/dev/null 2>&1 && echo "outside readable" || echo "outside denied"
echo x > "$HOME/state" && echo "state writable"
echo x > ` + work + `/granted && echo "grant writable"
echo x > /tmp/t && echo "tmp writable"
echo "tmp size $(( $(stat -f -c '%b * %S' /tmp) ))"
`
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = tree
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	if err := b.Confine(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "the skill\nhome=" + b.State + "\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapBnd: 0000000000000000\n" +
		"Max file size 1073741824 1073741824\nMax processes 256 256 processes\nMax open files 64 64\nMax address space 4294967296 4294967296\n" +
		"outside denied\nstate writable\ngrant writable\ntmp writable\ntmp size 268435456\n"
	got := string(out)
	if b.TmpSize == 0 { // bwrap before 0.7: /tmp is the host's default size
		if i := strings.Index(got, "tmp size "); i >= 0 {
			got = got[:i] + "tmp size 268435456\n"
		}
	}
	if _, err := sandbox.LandlockABI(); err != nil {
		want = strings.Replace(want, "outside denied", "outside readable", 1)
	}
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(work, "granted")); err != nil || string(b) != "x\n" {
		t.Errorf("grant: %q %v", b, err)
	}
}
