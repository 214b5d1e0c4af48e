package broker

import "github.com/skillgate/skillgate/internal/model/capability"

// ConnectionRequired reports whether the tool name, which [Broker.Tools]
// does not list for p, is withheld from p only because a remote server
// needs a connection p lacks (none, expired or revoked): a capability in
// p's scope that is not connected, or an executor dormant for p for that
// reason. The gateway then relays p's call of it to [Broker.Call], which
// answers "connection required: PROVIDER for tenant TENANT (...)" and
// audits the refusal for `skillgate pending`, instead of refusing an
// unknown tool.
func (b *Broker) ConnectionRequired(p capability.Principal, name string) bool {
	if b.opts.Executors.Connections == nil {
		return false
	}
	es := b.snap.Load().exec
	if es != nil && es.names[name] {
		return b.connectionRequired(es, p, name) != nil
	}
	c := b.opts.Decider.Find(p, name)
	if c == nil || (es != nil && es.mapped[c.ID()]) {
		return false
	}
	return !b.connected(p, c)
}
