package install

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// checkBackends compiles a provider skill's backends.yaml (beside its
// SKILL.md in tree) against the tools its servers offered at
// introspection: a backend naming an unknown executor, server or tool, or
// a mapping that cannot produce the tool's arguments, blocks approval
// with the file, the backend and the argument at fault. A skill without
// a backends file passes.
func checkBackends(cat *executor.Catalog, key, tree string, rep *manifest.Report) error {
	f, err := os.Open(filepath.Join(tree, executor.BackendsFileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, key, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, executor.MaxFileBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, key, err)
	}
	file := key + "/" + executor.BackendsFileName
	bf, err := executor.ParseBackends(file, data, cat)
	if err == nil {
		var servers []string
		var tools []capability.Tool
		for _, c := range rep.Capabilities {
			if !slices.Contains(servers, c.ExtensionID) {
				servers = append(servers, c.ExtensionID)
			}
			tools = append(tools, c.Tool)
		}
		_, err = bf.Compile(cat, key, servers, tools)
	}
	if err != nil {
		return fmt.Errorf("%w: %s cannot be approved: %w; fix %s and install the skill again", ErrBlocked, key, err, executor.BackendsFileName)
	}
	return nil
}

// executorCatalog is the catalog backends files are checked against:
// Options.Executors', else the built-in one.
func (s *Service) executorCatalog() *executor.Catalog {
	if s.executors != nil {
		if c := s.executors(); c != nil {
			return c
		}
	}
	return executor.Builtin()
}
