package install_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestActions: the decisions offered for a version are those its state's
// transitions allow: an enabled version is disabled or rechecked, never
// approved, rejected or enabled again; after drift, completing and
// approving come back once the re-analysis is known.
func TestActions(t *testing.T) {
	drift := map[string]string{"notes/add": "drift: description changed"}
	pending := json.RawMessage(`{}`)
	for _, tc := range []struct {
		in   store.Install
		want string
	}{
		{store.Install{State: store.StatePendingInstall}, "[reject recheck]"},
		{store.Install{State: store.StateAnalyzing}, "[reject recheck]"},
		{store.Install{State: store.StateBlocked}, "[complete suppress approve reject recheck]"},
		{store.Install{State: store.StateAwaitingApproval}, "[complete suppress approve reject recheck]"},
		{store.Install{State: store.StateInstalled}, "[enable recheck]"},
		{store.Install{State: store.StateEnabled}, "[disable recheck]"},
		{store.Install{State: store.StateDisabled}, "[enable recheck]"},
		{store.Install{State: store.StateEnabled, Blocked: drift}, "[disable recheck]"},
		{store.Install{State: store.StateEnabled, Blocked: drift, Pending: pending}, "[complete suppress approve disable recheck]"},
		{store.Install{State: store.StateInstalled, Pending: pending}, "[complete suppress enable recheck]"},
		{store.Install{State: store.StateRemoved}, "[]"},
		{store.Install{State: store.StateRejected}, "[]"},
	} {
		if got := fmt.Sprint(install.Actions(tc.in)); got != tc.want {
			t.Errorf("%s (blocked %d, pending %t): %s; want %s", tc.in.State, len(tc.in.Blocked), tc.in.Pending != nil, got, tc.want)
		}
	}
}
