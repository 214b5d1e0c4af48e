package app

import (
	"path/filepath"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

// ExecutorCatalogDir is the directory of operator executor catalogs,
// DATA/executors (docs/executors.md): each *.yaml, *.yml or *.json file
// in it is merged over the built-in catalog, in name order. The running
// gateway reloads them when one changes.
func (a *App) ExecutorCatalogDir() string {
	return filepath.Join(a.Data(), executor.CatalogDirName)
}

// executorCatalog returns the built-in catalog merged with the operator
// catalogs; a file that does not merge is left out (logged here; the
// running gateway audits it), and a directory that cannot be read leaves
// the built-in catalog alone.
func (a *App) executorCatalog() *executor.Catalog {
	cat, files, err := executor.LoadCatalogDir(executor.Builtin(), a.ExecutorCatalogDir())
	if err != nil {
		a.log.Error("executor catalogs: using the built-in catalog", "err", err)
		return executor.Builtin()
	}
	for _, f := range files {
		if f.Err != nil {
			a.log.Warn("executor catalog left out", "file", f.Name, "err", f.Err)
		}
	}
	return cat
}
