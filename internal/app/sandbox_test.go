package app

import (
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// TestSandboxRuntime: config.yaml's sandbox section becomes the run-time
// sandbox; a mode other than bubblewrap or none is refused with its key.
func TestSandboxRuntime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the run-time sandbox is Linux only")
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name    string
		skills  map[string]string
		modes   map[string]sandbox.Mode
		wantErr string
	}{
		{"defaults", nil, map[string]sandbox.Mode{}, ""},
		{"modes", map[string]string{"acme/gh": "none", "acme/x": "bubblewrap"}, map[string]sandbox.Mode{"acme/gh": sandbox.ModeNone, "acme/x": sandbox.ModeBubblewrap}, ""},
		{"bad mode", map[string]string{"acme/gh": "off"}, nil, `config: sandbox.skills.acme/gh: sandbox mode must be bubblewrap or none, not "off"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			a := New(Options{Data: data})
			cfg := &Config{}
			cfg.Sandbox.Skills = tt.skills
			cfg.Sandbox.Limits.Processes = 64
			cfg.Sandbox.Limits.CPUSeconds = -1
			r, err := a.sandboxRuntime(cfg, log)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("sandboxRuntime = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.StateRoot != filepath.Join(data, "sandbox") || len(r.Hide) != 1 || r.Hide[0] != data ||
				len(r.Helper) != 2 || r.Helper[1] != sandbox.HelperCommand || r.Limits != (sandbox.Limits{Processes: 64, CPUSeconds: -1}) {
				t.Fatalf("runtime = %+v", r)
			}
			if len(r.Modes) != len(tt.modes) {
				t.Fatalf("modes = %v, want %v", r.Modes, tt.modes)
			}
			for k, v := range tt.modes {
				if r.Modes[k] != v {
					t.Fatalf("modes = %v, want %v", r.Modes, tt.modes)
				}
			}
		})
	}
}
