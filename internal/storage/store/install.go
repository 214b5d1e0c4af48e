package store

import (
	"context"
	"encoding/json"
	"time"
)

// InstallState is where an imported skill version stands in the install
// flow. The set is closed; see the constants.
type InstallState string

// The install states. The flow is pending_install → analyzing → blocked |
// awaiting_approval → installed → enabled ⇄ disabled → removed, plus
// rejected.
const (
	StatePendingInstall   InstallState = "pending_install"
	StateAnalyzing        InstallState = "analyzing"
	StateBlocked          InstallState = "blocked"
	StateAwaitingApproval InstallState = "awaiting_approval"
	StateInstalled        InstallState = "installed"
	StateEnabled          InstallState = "enabled"
	StateDisabled         InstallState = "disabled"
	StateRemoved          InstallState = "removed"
	StateRejected         InstallState = "rejected"
)

// InstallStates lists every state in flow order.
var InstallStates = []InstallState{StatePendingInstall, StateAnalyzing, StateBlocked, StateAwaitingApproval,
	StateInstalled, StateEnabled, StateDisabled, StateRemoved, StateRejected}

// ApprovedStates are the states of a version a human approved: its
// capabilities and pins are the approved ones.
var ApprovedStates = []InstallState{StateInstalled, StateEnabled, StateDisabled}

// Approved reports whether s is one of [ApprovedStates].
func (s InstallState) Approved() bool {
	return s == StateInstalled || s == StateEnabled || s == StateDisabled
}

// Valid reports whether s is one of the defined states.
func (s InstallState) Valid() bool {
	for _, v := range InstallStates {
		if s == v {
			return true
		}
	}
	return false
}

// Install is one imported skill version (one content digest) and its place
// in the install flow. Its artefacts are kept here, the source of truth, and
// mirrored as files into its managed directory.
type Install struct {
	ID int64 `json:"-"`
	// Key is the skill identity ("category/name" or "name").
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Category    string   `json:"category,omitempty"`
	Description string   `json:"description"`
	Label       string   `json:"versionLabel,omitempty"`
	Digest      string   `json:"digest"`
	Tier        int      `json:"tier"`
	InvokableBy []string `json:"invokableBy"`
	// Dir is the version's managed directory; Source where it came from.
	Dir    string `json:"dir"`
	Source string `json:"source"`
	// Provenance records how the source was fetched (URL, ref, resolved
	// commit, archive digest, time), as JSON; nil for a local directory
	// or archive installed before it was recorded.
	Provenance json.RawMessage `json:"provenance,omitempty"`
	State      InstallState    `json:"state"`
	// Reason is why the last transition happened.
	Reason string `json:"reason"`
	// Proposed, Manifest and Report are the artefacts (nil when absent):
	// manifest.proposed.json, manifest.json and install_report.json.
	Proposed json.RawMessage `json:"-"`
	Manifest json.RawMessage `json:"-"`
	Report   json.RawMessage `json:"-"`
	// Pending is a re-analysis (an install report) awaiting re-approval
	// after drift; nil when none.
	Pending json.RawMessage `json:"-"`
	// Blocked maps approved capabilities ("server/tool") blocked since
	// approval (drift) to why.
	Blocked   map[string]string `json:"blocked,omitempty"`
	CreatedAt time.Time         `json:"createdAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
}

// InstallFilter selects installs. Zero fields match everything.
type InstallFilter struct {
	Key, Name, Digest string
	States            []InstallState
}

// InstallChange sets columns of an install in a transition. Nil fields are
// left as they are.
type InstallChange struct {
	Proposed, Manifest, Report, Pending *json.RawMessage
	Blocked                             *map[string]string
	Dir                                 *string
}

// Transition moves one install from one of From to To (To may equal the
// current state, for changes that keep it), sets Change and Reason, and
// appends the audit record Audit gives.
type Transition struct {
	Digest string
	From   []InstallState
	To     InstallState
	// Reason is why, kept as the install's Reason.
	Reason string
	Change InstallChange
	// Audit returns the transition's audit record, given the install as
	// it was; required. Package install writes its content.
	Audit InstallAudit
}

// InstallAudit returns the audit record of an install change, given the
// install as it was before the change (for CreateInstall, the Install
// given with the State it had: "" for a version not seen before). The
// store calls it inside the change's transaction, seals the record and
// appends it there: the change and its record commit together. A zero Time
// is set to the change's time; an error undoes the change.
type InstallAudit func(was Install) (AuditRecord, error)

// InstallStore persists installs. Every change is one transaction that
// also appends its audit record, sealed with the [AuditSeal] given.
type InstallStore interface {
	// CreateInstall records a new version in StatePendingInstall. A version
	// with the same digest in StateRemoved or StateRejected is reused;
	// any other existing one returns ErrConflict.
	CreateInstall(ctx context.Context, in Install, reason string, rec InstallAudit, seal AuditSeal) (Install, error)
	// Installs returns the matching installs, newest first.
	Installs(ctx context.Context, f InstallFilter) ([]Install, error)
	// TransitionInstall applies ts in order in one transaction. It returns
	// ErrNotFound for an unknown digest and ErrConflict when an install is
	// not in one of its From states; nothing is applied then.
	TransitionInstall(ctx context.Context, seal AuditSeal, ts ...Transition) ([]Install, error)
	// InstallGeneration increases with every committed install change.
	InstallGeneration(ctx context.Context) (int64, error)
}
