package app

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// stateDirName is the directory of the data directory that holds the
// confined servers' state directories: DATA/sandbox/<skill>/<version>.
const stateDirName = "sandbox"

// sandboxRuntime builds the run-time sandbox from the configuration: nil
// outside Linux, where bubblewrap does not exist (logged, once per
// gateway). Whether bwrap is installed is checked when a server starts, so
// that its calls fail with the reason and are audited.
func (a *App) sandboxRuntime(cfg *Config, log *slog.Logger) (*sandbox.Runtime, error) {
	modes := map[string]sandbox.Mode{}
	keys := make([]string, 0, len(cfg.Sandbox.Skills))
	for k := range cfg.Sandbox.Skills {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		mode, err := sandbox.ParseMode(cfg.Sandbox.Skills[k])
		if err != nil {
			return nil, fmt.Errorf("config: sandbox.skills.%s: %v", k, err)
		}
		modes[k] = mode
	}
	if runtime.GOOS != "linux" {
		log.Warn("no sandbox on this system: the servers of approved skills run as skillgate's user (docs/sandbox.md)", "os", runtime.GOOS)
		return nil, nil
	}
	data, err := filepath.Abs(a.Data())
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: finding skillgate's own binary for its helper: %w", err)
	}
	if abi, err := sandbox.LandlockABI(); err != nil {
		log.Warn("Landlock is not available: confined servers rely on bubblewrap alone", "err", err)
	} else {
		log.Debug("Landlock available", "abi", abi)
	}
	l := cfg.Sandbox.Limits
	return &sandbox.Runtime{
		StateRoot: filepath.Join(data, stateDirName),
		Hide:      []string{data},
		Helper:    []string{self, sandbox.HelperCommand},
		Limits: sandbox.Limits{
			AddressSpace: l.MemoryBytes, Processes: l.Processes, OpenFiles: l.OpenFiles,
			FileSize: l.FileSizeBytes, CPUSeconds: l.CPUSeconds, TmpBytes: l.TmpBytes,
		},
		Modes: modes,
	}, nil
}
