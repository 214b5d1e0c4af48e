package install

import (
	"fmt"
	"slices"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// Action is an operator's decision on one install version: the CLI
// commands, REST routes and console forms of the same names.
type Action string

// The actions, in the order of the install flow.
const (
	ActionComplete Action = "complete"
	ActionSuppress Action = "suppress"
	ActionApprove  Action = "approve"
	ActionReject   Action = "reject"
	ActionEnable   Action = "enable"
	ActionDisable  Action = "disable"
	ActionRecheck  Action = "recheck"
)

// actions lists every Action in flow order.
var actions = []Action{ActionComplete, ActionSuppress, ActionApprove, ActionReject, ActionEnable, ActionDisable, ActionRecheck}

// decided are the states after analysis in which an operator decides.
var decided = []store.InstallState{store.StateBlocked, store.StateAwaitingApproval, store.StateInstalled, store.StateEnabled, store.StateDisabled}

// actionFrom are the states each action moves an install version from:
// the install state machine's edges. Each operation finds the version it
// acts on among these states, and [Actions] offers an action only there.
var actionFrom = map[Action][]store.InstallState{
	ActionComplete: decided,
	ActionSuppress: decided,
	ActionApprove:  decided,
	ActionReject:   preApproval,
	ActionEnable:   {store.StateInstalled, store.StateDisabled},
	ActionDisable:  {store.StateEnabled},
	ActionRecheck:  append(slices.Clone(preApproval), store.ApprovedStates...),
}

// check returns why a cannot act on in now, or nil: in must be in one of
// a's states, and, once approved, a version takes completions and
// suppressions only for the re-analysis that drift made, and an approval
// only of capabilities drift blocked, once their new definitions are known.
func (a Action) check(in store.Install) error {
	if !slices.Contains(actionFrom[a], in.State) {
		return fmt.Errorf("%w: %s is %s", ErrState, in.Key, in.State)
	}
	if !in.State.Approved() {
		return nil
	}
	switch a {
	case ActionComplete, ActionSuppress:
		what := "its risk metadata"
		if a == ActionSuppress {
			what = "its findings"
		}
		if len(in.Pending) == 0 {
			return fmt.Errorf("%w: %s is %s and approved; %s changes only with a new analysis after drift (skillgate recheck %s)", ErrState, in.Key, in.State, what, in.Key)
		}
	case ActionApprove:
		if len(in.Blocked) == 0 {
			return fmt.Errorf("%w: %s is already approved (%s); nothing to approve", ErrState, in.Key, in.State)
		}
		if len(in.Pending) == 0 {
			return fmt.Errorf("%w: %s: drift blocked %d capabilities but their new definitions are not known yet; run skillgate recheck %s, review, then approve",
				ErrBlocked, in.Key, len(in.Blocked), in.Key)
		}
	}
	return nil
}

// Actions returns the actions an operator can take on in now, in flow
// order: each whose transition starts from in's state and whose
// condition holds (see the operations). The console offers exactly these.
func Actions(in store.Install) []Action {
	var out []Action
	for _, a := range actions {
		if a.check(in) == nil {
			out = append(out, a)
		}
	}
	return out
}
