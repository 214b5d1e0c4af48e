package install_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// The crash test re-executes this test binary as a child that runs the
// whole flow (install, approve, enable, disable, remove) and kills itself
// with SIGKILL at one named point. The parent then opens the data directory
// as a restarted skillgate would, and checks that nothing is half done.
const (
	envChild      = "SKILLGATE_INSTALL_TEST_CHILD"
	envChildData  = "SKILLGATE_INSTALL_TEST_DATA"
	envChildSrc   = "SKILLGATE_INSTALL_TEST_SRC"
	envCrashPoint = "SKILLGATE_TEST_CRASHPOINT"
)

// crashPoints are the points of the flow, in the order the flow meets them.
var crashPoints = []string{
	"copy-midway", "copy-before-rename", "install-after-copy", "install-after-row",
	"analyze-start-before-commit", "analyze-start-after-commit", "analyze-after-introspect",
	"analyze-before-commit", "analyze-after-commit",
	"mirror-" + manifest.FileProposed, "mirror-" + manifest.FileReport,
	"approve-before-commit", "approve-after-commit", "mirror-" + manifest.FileApproved,
	"enable-before-commit", "enable-after-commit",
	"disable-before-commit", "disable-after-commit",
	"remove-before-commit", "remove-after-commit",
}

func childService(data string, crash func(string)) (*install.Service, *sqlite.DB, error) {
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "skillgate.db"))
	if err != nil {
		return nil, nil, err
	}
	svc, err := install.New(install.Options{Store: db, Root: filepath.Join(data, "imported"), Crash: crash,
		MCP: mcpclient.Options{Limits: testLimits(), InheritEnv: []string{"PATH", "HOME", "TMPDIR"}}})
	return svc, db, err
}

// runChild is the child process: the flow, with a crash at the point named
// in the environment.
func runChild(string) int {
	point := os.Getenv(envCrashPoint)
	seen := map[string]int{}
	crash := func(p string) {
		seen[p]++
		// The mirror points happen on every transition; crash on the first.
		if p == point && seen[p] == 1 {
			if self, err := os.FindProcess(os.Getpid()); err == nil {
				self.Kill() // SIGKILL
			}
		}
	}
	svc, db, err := childService(os.Getenv(envChildData), crash)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := svc.Recover(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	steps := []func() (*install.Review, error){
		func() (*install.Review, error) { return svc.Install(ctx, os.Getenv(envChildSrc), "operator:crash") },
		func() (*install.Review, error) { return svc.Approve(ctx, "crashy", nil, "operator:crash") },
		func() (*install.Review, error) { return svc.Enable(ctx, "crashy", "operator:crash") },
		func() (*install.Review, error) { return svc.Disable(ctx, "crashy", "operator:crash") },
		func() (*install.Review, error) { return svc.Remove(ctx, "crashy", "operator:crash") },
	}
	for i, step := range steps {
		if _, err := step(); err != nil {
			fmt.Fprintf(os.Stderr, "step %d: %v\n", i, err)
			return 1
		}
	}
	fmt.Fprintln(os.Stderr, "crash point never reached:", point)
	return 3
}

func TestCrashSafety(t *testing.T) {
	t.Parallel()
	src := writeSkill(t, t.TempDir(), "crashy", "allowed-tools: notes/echo\n---\nEchoes. "+strings.Repeat("Long text. ", 200)+"\n",
		map[string]any{"notes": testServerDecl("normal", nil)})
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("ref-%02d.md", i)), []byte(strings.Repeat("x", 1000*i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, point := range crashPoints {
		t.Run(point, func(t *testing.T) {
			data := t.TempDir()
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), envChild+"=flow", envChildData+"="+data, envChildSrc+"="+src, envCrashPoint+"="+point)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die at %s: %v\n%s", point, err, stderr.String())
			}
			// Restart: open and recover, then check nothing is half done.
			svc, db, err := childService(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			rec, err := svc.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			checkConsistent(t, db, svc)
			// Resume the flow to the end.
			rows, _ := db.Installs(ctx, store.InstallFilter{})
			state := store.InstallState("")
			if len(rows) == 1 {
				state = rows[0].State
			}
			switch state {
			case "", store.StatePendingInstall, store.StateAnalyzing:
				if state != "" && len(rec.Interrupted) != 1 {
					t.Errorf("recovery did not report the interrupted install: %+v", rec)
				}
				if _, err := svc.Install(ctx, src, "operator:crash"); err != nil {
					t.Fatal("resume install:", err)
				}
				fallthrough
			case store.StateAwaitingApproval:
				if _, err := svc.Approve(ctx, "crashy", nil, "operator:crash"); err != nil {
					t.Fatal("resume approve:", err)
				}
				fallthrough
			case store.StateInstalled, store.StateDisabled:
				if _, err := svc.Enable(ctx, "crashy", "operator:crash"); err != nil {
					t.Fatal("resume enable:", err)
				}
			case store.StateEnabled, store.StateRemoved:
			default:
				t.Fatalf("unexpected state %s after a crash at %s", state, point)
			}
			checkConsistent(t, db, svc)
			if state != store.StateRemoved {
				en, err := svc.Enabled(ctx)
				if err != nil || len(en) != 1 || len(en[0].Manifest.Capabilities) != 1 {
					t.Fatalf("after resuming: enabled %+v, %v", en, err)
				}
			}
		})
	}
}

// checkConsistent asserts the crash-safety invariants: every live record
// has its whole tree and exactly its recorded artefacts, nothing else is in
// managed storage, and no temporary file is left.
func checkConsistent(t *testing.T, db *sqlite.DB, svc *install.Service) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Installs(ctx, store.InstallFilter{})
	if err != nil {
		t.Fatal(err)
	}
	root := svc.Storage().Root
	want := map[string]bool{".lock": true}
	for _, r := range rows {
		if r.State == store.StateRemoved {
			if _, err := os.Stat(r.Dir); !os.IsNotExist(err) {
				t.Errorf("removed %s still has files", r.Digest)
			}
			continue
		}
		want[filepath.Base(r.Dir)] = true
		files := map[string][]byte{}
		tree := filepath.Join(r.Dir, install.SkillDir)
		filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(tree, p)
				files[filepath.ToSlash(rel)] = b
			}
			return nil
		})
		if got := skill.DigestBytes(files); got != r.Digest {
			t.Errorf("%s: tree on disk has digest %s (%d files)", r.Digest, got, len(files))
		}
		for _, a := range []struct {
			name string
			data []byte
		}{{manifest.FileProposed, r.Proposed}, {manifest.FileReport, r.Report}, {manifest.FileApproved, r.Manifest}} {
			b, err := os.ReadFile(filepath.Join(r.Dir, a.name))
			if len(a.data) == 0 {
				if err == nil {
					t.Errorf("%s: %s on disk but not recorded (state %s)", r.Digest, a.name, r.State)
				}
				continue
			}
			if !bytes.Equal(b, a.data) {
				t.Errorf("%s: %s on disk differs from the record (%v)", r.Digest, a.name, err)
			}
		}
		ents, _ := os.ReadDir(r.Dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".tmp-") {
				t.Errorf("temporary file left: %s", e.Name())
			}
		}
		if (r.State == store.StateInstalled || r.State == store.StateEnabled || r.State == store.StateDisabled) != (len(r.Manifest) > 0) {
			t.Errorf("%s: state %s with manifest %d bytes", r.Digest, r.State, len(r.Manifest))
		}
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if !want[e.Name()] {
			t.Errorf("managed storage holds %s, which no record owns", e.Name())
		}
	}
	_ = time.Second
}
