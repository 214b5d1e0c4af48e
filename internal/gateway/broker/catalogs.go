package broker

import (
	"context"
	"encoding/json"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

// The audit actions of operator executor catalogs (docs/executors.md).
const (
	// ActionCatalogLoad records a catalog file merged when the gateway
	// started.
	ActionCatalogLoad = "executor.catalog.load"
	// ActionCatalogReload records a catalog file merged after the running
	// gateway found the directory changed.
	ActionCatalogReload = "executor.catalog.reload"
	// ActionCatalogReject records a catalog file left out, with why.
	ActionCatalogReject = "executor.catalog.reject"
)

// SetCatalog replaces the executor catalog the broker builds its
// executors from (the built-in one merged with the operator's files); it
// takes effect at the next [Broker.Reload].
func (b *Broker) SetCatalog(c *executor.Catalog) { b.base.Store(c) }

// catalog is the catalog the next reload builds from.
func (b *Broker) catalog() *executor.Catalog {
	if c := b.base.Load(); c != nil {
		return c
	}
	return b.opts.Executors.Catalog
}

// loadCatalogs merges the operator catalog files of
// RuntimeOptions.CatalogDir over the base catalog, hands the result to
// the broker, and audits each file (action: ActionCatalogLoad or
// ActionCatalogReload for a merged one, ActionCatalogReject for one left
// out). It reports whether the files changed since the last call; a
// directory that cannot be read keeps the catalog the broker has.
func (r *Runtime) loadCatalogs(action string) bool {
	if r.opts.CatalogDir == "" {
		return false
	}
	base := r.opts.Executors.Catalog
	if base == nil {
		base = executor.Builtin()
	}
	cat, files, err := executor.LoadCatalogDir(base, r.opts.CatalogDir)
	if err != nil {
		r.log.Error("executor catalogs: keeping the previous catalog", "err", err)
		return false
	}
	fp := executor.CatalogFingerprint(files)
	if fp == r.catalogs {
		return false
	}
	r.catalogs = fp
	r.Broker.SetCatalog(cat)
	for _, f := range files {
		data, _ := json.Marshal(f)
		rec := audit.Record{Actor: "system", Action: action, Subject: "executor-catalog:" + f.Name, Decision: capability.Allow, Data: data}
		if f.Err != nil {
			rec.Action, rec.Decision, rec.Reasons = ActionCatalogReject, capability.Deny, []string{f.Err.Error()}
			r.log.Error("executor catalog left out", "file", f.Name, "err", f.Err)
		}
		if err := r.audit.Record(rec); err != nil {
			r.log.Error("audit of an executor catalog failed", "file", f.Name, "err", err)
		}
	}
	if len(files) == 0 && action == ActionCatalogReload {
		// Every file removed: the built-in catalog alone, audited too.
		if err := r.audit.Record(audit.Record{Actor: "system", Action: action, Subject: "executor-catalog:" + r.opts.CatalogDir, Decision: capability.Allow,
			Data: json.RawMessage(`{"files":0}`)}); err != nil {
			r.log.Error("audit of an executor catalog failed", "err", err)
		}
	}
	return true
}

// reloadCatalogs is the watch's check of the operator catalogs: when a
// file changed, the broker reloads with the new catalog.
func (r *Runtime) reloadCatalogs(ctx context.Context) bool {
	if !r.loadCatalogs(ActionCatalogReload) {
		return false
	}
	if err := r.Broker.Reload(ctx); err != nil {
		r.log.Error("capability reload after an executor catalog change failed", "err", err)
		return false
	}
	r.changed("executors")
	return true
}
