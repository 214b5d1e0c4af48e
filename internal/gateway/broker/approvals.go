package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
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
	rs, err := invocations(ctx, log, since)
	if err != nil {
		return nil, fmt.Errorf("approval requests: %w", err)
	}
	return approvalRequests(rs), nil
}

// Requests returns what [ApprovalRequests] and [ConnectionRequests]
// return, from one read of the log: what `skillgate pending` shows.
func Requests(ctx context.Context, log audit.Log, since time.Time) ([]ApprovalRequest, []ConnectionRequest, error) {
	rs, err := invocations(ctx, log, since)
	if err != nil {
		return nil, nil, fmt.Errorf("pending requests: %w", err)
	}
	return approvalRequests(rs), connectionRequests(rs), nil
}

// invocations reads the last [MaxApprovalRecords] capability.invoke
// records since the given time, oldest first.
func invocations(ctx context.Context, log audit.Log, since time.Time) ([]audit.Record, error) {
	return log.Query(ctx, audit.Filter{Action: "capability.invoke", Since: since, Limit: MaxApprovalRecords, Last: true})
}

// approvalRequests folds capability.invoke records into the approval
// requests still open (see [ApprovalRequests]).
func approvalRequests(rs []audit.Record) []ApprovalRequest {
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
	return kept
}

// ConnectionRequest is a tenant whose agents' calls were refused because
// a remote server needs a connection the tenant lacks (none, or an expired
// one), as the audit log recorded it: what `skillgate pending` shows
// operators, with the command that connects it (agents are never given
// an authorization URL).
type ConnectionRequest struct {
	// Tenant lacks a connection to Provider.
	Tenant   string `json:"tenant"`
	Provider string `json:"provider"`
	// Last is the time of the latest refused call, Times how many calls
	// were refused since the start of the window.
	Last  time.Time `json:"last"`
	Times int       `json:"times"`
	// Connect is the command that connects it.
	Connect string `json:"connect"`
}

// ConnectionRequests returns the tenants and providers whose calls were
// refused for want of a connection since the given time, one per tenant
// and provider, oldest first, leaving out those an allowed call of the
// same tenant through a connection to the provider followed (someone
// connected). It reads at most the last [MaxApprovalRecords]
// capability.invoke records of the window.
func ConnectionRequests(ctx context.Context, log audit.Log, since time.Time) ([]ConnectionRequest, error) {
	rs, err := invocations(ctx, log, since)
	if err != nil {
		return nil, fmt.Errorf("connection requests: %w", err)
	}
	return connectionRequests(rs), nil
}

// connectionRequests folds capability.invoke records into the
// connection requests still open (see [ConnectionRequests]).
func connectionRequests(rs []audit.Record) []ConnectionRequest {
	type key struct{ tenant, provider string }
	idx := map[key]int{}
	var out []ConnectionRequest
	for _, r := range rs {
		var data struct {
			Connection mcpclient.ConnectionUse `json:"connection"`
		}
		if json.Unmarshal(r.Data, &data) != nil || data.Connection.Provider == "" || data.Connection.Tenant == "" {
			continue
		}
		k := key{data.Connection.Tenant, data.Connection.Provider}
		switch r.Decision {
		case capability.Allow:
			if i, ok := idx[k]; ok {
				out[i].Times = -1 // connected since
				delete(idx, k)
			}
		case capability.Deny:
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, ConnectionRequest{Tenant: k.tenant, Provider: k.provider,
					Connect: "skillgate connect " + k.provider + " --tenant " + k.tenant})
			}
			out[i].Last = r.Time
			out[i].Times++
		}
	}
	kept := out[:0]
	for _, c := range out {
		if c.Times > 0 {
			kept = append(kept, c)
		}
	}
	return kept
}
