package install

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// transition is one install change as the flow writes it: the store's
// transition (digest, states, reason, artefacts) and what its audit record
// says beyond them.
type transition struct {
	Digest string
	From   []store.InstallState
	To     store.InstallState
	// Actor is who made the change; "" is "system".
	Actor  string
	Reason string
	// Action names the change in the audit log; "" is "install."+To.
	Action string
	Change store.InstallChange
	// Data adds fields to the audit record's data.
	Data map[string]any
}

// stored returns t as the store applies it, with its audit record.
func (t transition) stored() store.Transition {
	return store.Transition{Digest: t.Digest, From: t.From, To: t.To, Reason: t.Reason, Change: t.Change,
		Audit: changeRecord(t.Actor, t.Action, t.Reason, t.To, t.Data)}
}

// changeRecord returns the audit record of an install change to state to:
// Action (default "install."+to), Actor (default "system"), Subject the
// skill key, Reasons [reason], Data {"from","to","digest"} plus data.
func changeRecord(actor, action, reason string, to store.InstallState, data map[string]any) store.InstallAudit {
	if action == "" {
		action = "install." + string(to)
	}
	if actor == "" {
		actor = "system"
	}
	return func(was store.Install) (store.AuditRecord, error) {
		d := map[string]any{"from": string(was.State), "to": string(to), "digest": was.Digest}
		maps.Copy(d, data)
		raw, err := json.Marshal(d)
		if err != nil {
			return store.AuditRecord{}, fmt.Errorf("audit data of %s: %w", was.Key, err)
		}
		return store.AuditRecord{Actor: actor, Action: action, Subject: was.Key, Reasons: []string{reason}, Data: raw}, nil
	}
}
