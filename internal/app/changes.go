package app

import (
	"context"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// newChanges wires the changes queue over the install service: its smoke
// check builds the executors the gateway would serve, with the
// configuration's executor options, without calling any server.
func (a *App) newChanges(db store.DB, svc *install.Service) (*change.Service, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	opts, err := executorOptions(cfg, a.executorCatalog())
	if err != nil {
		return nil, err
	}
	opts.Registered = db.Registrations
	// The smoke check builds the executors from what the gateway loads:
	// the first_party skills, then the enabled installs.
	reg := registry.New(db, registry.Options{Logger: a.log})
	load := broker.LoadAll(broker.LoadFirstParty(reg, a.log), broker.LoadInstalled(svc))
	opts.Catalog = a.executorCatalog()
	return change.New(change.Options{Store: db, Installs: svc, Smoke: broker.Smoke(load, opts)})
}

// OpenChanges opens the store, the install service and the changes queue.
func (a *App) OpenChanges(ctx context.Context) (*change.Service, func(), error) {
	svc, db, closeFn, err := a.openInstallsDB(ctx)
	if err != nil {
		return nil, nil, err
	}
	cs, err := a.newChanges(db, svc)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return cs, closeFn, nil
}

// Changes lists the changes queue's pending changes, with all the decided
// ones too; never nil.
func (a *App) Changes(ctx context.Context, all bool) ([]change.Item, error) {
	cs, closeFn, err := a.OpenChanges(ctx)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	items, err := cs.List(ctx, all)
	if items == nil && err == nil {
		items = []change.Item{}
	}
	return items, err
}

// OnChange opens the changes queue and returns what do returns of it.
func (a *App) OnChange(ctx context.Context, do func(*change.Service) (change.Item, error)) (change.Item, error) {
	cs, closeFn, err := a.OpenChanges(ctx)
	if err != nil {
		return change.Item{}, err
	}
	defer closeFn()
	return do(cs)
}
