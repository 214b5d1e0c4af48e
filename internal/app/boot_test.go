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
