package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// configSandbox is config.yaml's sandbox section (docs/sandbox.md).
type configSandbox struct {
	// Limits bound every confined server: 0 (or absent) takes the
	// default, -1 means no bound.
	Limits struct {
		MemoryBytes   int64 `yaml:"memory_bytes"`
		Processes     int64 `yaml:"processes"`
		OpenFiles     int64 `yaml:"open_files"`
		FileSizeBytes int64 `yaml:"file_size_bytes"`
		CPUSeconds    int64 `yaml:"cpu_seconds"`
		TmpBytes      int64 `yaml:"tmp_bytes"`
	} `yaml:"limits"`
	// Skills sets a skill's mode by key: bubblewrap (the default) or none,
	// which only a first_party skill may have.
	Skills map[string]string `yaml:"skills"`
}

// stateDirName is the directory of the data directory that holds the
// confined servers' state directories: DATA/sandbox/<skill>/<version>.
const stateDirName = "sandbox"

// sandboxRuntime builds the run-time sandbox from the configuration: nil
// outside Linux, where bubblewrap does not exist (logged, once per
// gateway). Whether bwrap is installed is checked when a server starts, so
// that its calls fail with the reason and are audited.
func (m *Main) sandboxRuntime(cfg *Config, log *slog.Logger) (*sandbox.Runtime, error) {
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
	data, err := filepath.Abs(m.data())
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
