package app

import (
	"context"
	"fmt"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// disabledFirstParty returns the disabled first_party skills of reg that
// ship a backends.yaml: the gateway does not serve them, so `skillgate
// executors` shows their backends off, with why and how to turn them on.
// A rejected or shadowed skill is not listed (scan and ls say why).
func disabledFirstParty(ctx context.Context, reg *registry.Registry) ([]broker.InactiveSkill, error) {
	es, err := reg.List(ctx, registry.Query{Trust: string(capability.TrustFirstParty), Disabled: true})
	if err != nil {
		return nil, fmt.Errorf("first_party skills: %w", err)
	}
	var out []broker.InactiveSkill
	for _, e := range es {
		if e.State() != "disabled" {
			continue
		}
		data, err := broker.ReadBackends(e.Dir)
		if err != nil || data == nil {
			continue
		}
		out = append(out, broker.InactiveSkill{Key: e.Key, Backends: data, Off: executor.Off{Code: executor.OffSkillDisabled,
			Detail: fmt.Sprintf("first_party skill %s is disabled; enable it with skillgate enable %s", e.Key, e.Key)}})
	}
	return out, nil
}
