package app

import (
	"context"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// newChanges wires the changes queue over the install service: its smoke
// check builds the executors the gateway would serve, with the
// configuration's executor options, without calling any server.
func (a *App) newChanges(db store.ChangeStore, svc *install.Service) (*change.Service, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	opts, err := executorOptions(cfg)
	if err != nil {
		return nil, err
	}
	opts.Registered = db.Registrations
	return change.New(change.Options{Store: db, Installs: svc, Smoke: broker.Smoke(broker.LoadInstalled(svc), opts)})
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
