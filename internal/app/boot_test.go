package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// TestWriteBootScan checks what serve and mcp say of their scan at start.
func TestWriteBootScan(t *testing.T) {
	rep := &registry.ScanReport{Skills: 3, Valid: 2, Rejected: 1, Parsed: 3, Removed: 1}
	for _, c := range []struct {
		name string
		bs   *BootScan
		err  error
		want string
	}{
		{"current", &BootScan{Duration: time.Millisecond}, nil, ""},
		{"scanned", &BootScan{Reason: "the registry is empty", Result: &ScanResult{ScanReport: rep}, Duration: 42 * time.Millisecond}, nil,
			"skillgate mcp: scanned at start (the registry is empty): 3 skills (2 valid, 1 rejected), 3 parsed, 1 removed, in 42 ms\n"},
		{"skipped", &BootScan{Skipped: "the store is shared by replicas, and its registry is not empty (root /r changed since it was scanned)"}, nil,
			"skillgate mcp: no scan at start: the store is shared by replicas, and its registry is not empty (root /r changed since it was scanned)\n"},
		{"failed", &BootScan{Reason: "the registry is empty"}, errors.New("root /r: permission denied"), "skillgate mcp: scan at start: root /r: permission denied; serving the registry as it was\n"},
	} {
		var b strings.Builder
		WriteBootScan(&b, "skillgate mcp", c.bs, c.err)
		if b.String() != c.want {
			t.Errorf("%s: %q, want %q", c.name, b.String(), c.want)
		}
	}
}

// TestScanAtBoot checks that a runtime opened on an empty data directory
// with a configured root scans it at start, then finds it current.
func TestScanAtBoot(t *testing.T) {
	ctx := context.Background()
	root, data := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{"alpha/SKILL.md": "---\nname: alpha\ndescription: Alpha.\n---\n"})
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte("roots:\n  - path: "+root+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := New(Options{Data: data})
	defer a.Close()
	d, err := a.OpenRuntime(ctx, &Storage{Kind: "local"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	time.Sleep(150 * time.Millisecond) // past the racy window: the walk keeps a stamp
	bs, err := a.ScanAtBoot(ctx, d, nil, "")
	if err != nil || bs.Reason != registry.StaleEmpty || bs.Result == nil || bs.Result.Skills != 1 {
		t.Fatalf("first start: %+v, %v", bs, err)
	}
	snap, err := d.Registry.Snapshot(ctx)
	if err != nil || snap.Len(skill.T3) != 1 {
		t.Fatalf("snapshot after the scan at start: %v", err)
	}
	bs, err = a.ScanAtBoot(ctx, d, nil, "")
	if err != nil || bs.Reason != "" || bs.Result != nil {
		t.Errorf("second start: %+v, %v; want nothing scanned", bs, err)
	}
}

// TestRescanKeepsWiderLimits: a root scanned with wider bounds than the
// configured ones ('skillgate scan --max-dirs') is rescanned at start with
// those bounds, not the configured ones: the server neither rescans a
// root that did not change nor forgets the skills beyond its own bounds
// when it did.
func TestRescanKeepsWiderLimits(t *testing.T) {
	ctx := context.Background()
	root, data := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		files["group-"+n+"/"+n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: Skill " + n + ".\n---\n"
	}
	write(t, root, files)
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte("limits:\n  max_dirs: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := New(Options{Data: data})
	defer a.Close()
	cfg, err := a.Config()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond) // past the racy window: the walk keeps a stamp
	// What 'skillgate scan --root ROOT --max-dirs 100' does.
	reg, closeReg, err := a.OpenRegistry(ctx, Limits(cfg, 0, 100), false)
	if err != nil {
		t.Fatal(err)
	}
	scanRoots(t, a, reg, []string{root}, "")
	closeReg()

	d, err := a.OpenRuntime(ctx, &Storage{Kind: "local"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Registry.Limits().MaxDirs != 4 {
		t.Fatalf("the server's bounds: %+v", d.Registry.Limits())
	}
	bs, err := a.ScanAtBoot(ctx, d, nil, "")
	if err != nil || bs.Reason != "" || bs.Result != nil {
		t.Errorf("unchanged root: %+v, %v; want nothing scanned", bs, err)
	}
	write(t, root, map[string]string{"group-g/g/SKILL.md": "---\nname: g\ndescription: Skill g.\n---\n"})
	bs, err = a.ScanAtBoot(ctx, d, nil, "")
	if err != nil || bs.Result == nil || bs.Result.Skills != 7 || bs.Result.Removed != 0 {
		t.Fatalf("changed root: %+v, %v; want 7 skills, none removed", bs.Result, err)
	}
	snap, err := d.Registry.Snapshot(ctx)
	if err != nil || snap.Len(skill.T3) != 7 {
		t.Fatalf("snapshot after the rescan: %v", err)
	}
}
