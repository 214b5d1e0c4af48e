package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

// MaxApprovalRecords bounds the audit records [ApprovalRequests] reads.
const MaxApprovalRecords = 10_000

// ApprovalRequest is a capability call that was refused until a human
// approves it, as the audit log recorded it: what `skillgate pending` shows
// operators, with the command that approves it (which the agent is never
// told).
type ApprovalRequest struct {
	// Agent is the audit actor that asked ("agent:tenant/agent").
	Agent string `json:"agent"`
	// Capability is "skill:server/tool".
	Capability string `json:"capability"`
	// Last is the time of the latest refused call, Times how many calls
	// were refused since the start of the window.
	Last  time.Time `json:"last"`
	Times int       `json:"times"`
	// Approve is the command that grants one call.
	Approve string `json:"approve"`
}

// ApprovalRequests returns the calls refused for want of approval since
// the given time, one per agent and capability, oldest first, leaving out
// those that an allowed call of the same agent and capability followed
// (the approval came). It reads at most the last [MaxApprovalRecords]
// capability.invoke records of the window.
func ApprovalRequests(ctx context.Context, log audit.Log, since time.Time) ([]ApprovalRequest, error) {
	rs, err := log.Query(ctx, audit.Filter{Action: "capability.invoke", Since: since, Limit: MaxApprovalRecords, Last: true})
	if err != nil {
		return nil, fmt.Errorf("approval requests: %w", err)
	}
	type key struct{ agent, capability string }
	idx := map[key]int{}
	var out []ApprovalRequest
	for _, r := range rs {
		k := key{r.Actor, r.Subject}
		switch r.Decision {
		case capability.Allow:
			if i, ok := idx[k]; ok {
				out[i].Times = -1 // answered
				delete(idx, k)
			}
		case capability.RequireApproval:
			var data struct {
				Approve string `json:"approve"`
			}
			if json.Unmarshal(r.Data, &data) != nil || data.Approve == "" {
				continue
			}
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, ApprovalRequest{Agent: r.Actor, Capability: r.Subject})
			}
			out[i].Last, out[i].Approve = r.Time, data.Approve
			out[i].Times++
		}
	}
	kept := out[:0]
	for _, a := range out {
		if a.Times > 0 {
			kept = append(kept, a)
		}
	}
	return kept, nil
}
