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
	bc, err := backendsCheck(cat, key, tree, rep)
	if err != nil {
		return err
	}
	if bc != nil && bc.Error != "" {
		return fmt.Errorf("%w: %s cannot be approved: %s; fix %s and install the skill again", ErrBlocked, key, bc.Error, executor.BackendsFileName)
	}
	return nil
}

// backendsCheck is admission layer 3's check of the backends.yaml beside
// SKILL.md in tree (nil when there is none): parsed against the catalog
// and compiled against every tool rep's servers offered. A file that does
// not parse or compile is reported in the check's Error; err is a failure
// to read it.
func backendsCheck(cat *executor.Catalog, key, tree string, rep *manifest.Report) (*manifest.BackendsCheck, error) {
	f, err := os.Open(filepath.Join(tree, executor.BackendsFileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, key, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, executor.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, key, err)
	}
	file := key + "/" + executor.BackendsFileName
	bc := &manifest.BackendsCheck{Maps: []string{}}
	bf, err := executor.ParseBackends(file, data, cat)
	if err == nil {
		bc.Provider = bf.Provider
		// Every declared server counts; the backends of one that could
		// not be introspected are not compiled (its tools are unknown,
		// and the server's own failure already blocks the skill).
		var servers, failed []string
		for _, sr := range rep.Servers {
			servers = append(servers, sr.ServerID)
			if sr.Error != nil {
				failed = append(failed, sr.ServerID)
			}
		}
		var tools []capability.Tool
		for _, c := range rep.Capabilities {
			tools = append(tools, c.Tool)
		}
		known := *bf
		known.Backends = slices.DeleteFunc(slices.Clone(bf.Backends), func(d executor.BackendDecl) bool {
			return slices.Contains(failed, d.Server)
		})
		_, err = known.Compile(cat, key, servers, tools)
		for _, d := range bf.Backends {
			if slices.Contains(failed, d.Server) && !slices.Contains(bc.Unchecked, d.Server) {
				bc.Unchecked = append(bc.Unchecked, d.Server)
			}
		}
		for _, d := range bf.Backends {
			bc.Maps = append(bc.Maps, d.Server+"/"+d.Tool+"="+d.Executor)
		}
	}
	if err != nil {
		bc.Error = err.Error()
	}
	return bc, nil
}

// backendsReason is layer 3's verdict reason for a backends file that
// does not compile, naming the fix; "" when it does (or there is none).
func backendsReason(rep *manifest.Report) string {
	if rep.Backends == nil || rep.Backends.Error == "" {
		return ""
	}
	return fmt.Sprintf("layer 3 (format): %s; fix %s and install the skill again", rep.Backends.Error, executor.BackendsFileName)
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
