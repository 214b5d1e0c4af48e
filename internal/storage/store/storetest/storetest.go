// Package storetest is the conformance suite of [store.DB]: the cases
// every implementation (store/sqlite, store/postgres) must pass, with the
// same outcomes, the same error kinds and the same messages. An
// implementation's tests call [Run] with a [Harness] that opens its
// stores.
package storetest

import (
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// Harness opens the stores of one implementation for the suite.
type Harness struct {
	// Open opens a fresh, empty store for t, closed when t ends. now,
	// when not nil, is the store's clock (its Now).
	Open func(t *testing.T, now func() time.Time) store.DB
	// Share opens another handle on the store db, as a second process on
	// the same data would, closed when t ends: the concurrency cases race
	// both handles.
	Share func(t *testing.T, db store.DB) store.DB
}

// testCase is one case of the suite.
type testCase struct {
	name string
	run  func(t *testing.T, h Harness)
}

// cases lists the suite, area by area.
var cases = []testCase{
	{"ApplyScansHistory", testApplyScansHistory},
	{"RootTrust", testRootTrust},
	{"RegistryGenerationShared", testRegistryGenerationShared},
	{"ScanCache", testScanCache},
	{"HostileNames", testHostileNames},
	{"InstallTransitions", testInstallTransitions},
	{"InstallGenerationShared", testInstallGenerationShared},
	{"AuditAppendAndVerify", testAuditAppendAndVerify},
	{"AuditQuery", testAuditQuery},
	{"AuditRejectsIncomplete", testAuditRejectsIncomplete},
	{"AuditWriterGroupCommit", testAuditWriterGroupCommit},
	{"AuditConcurrentAppend", testAuditConcurrentAppend},
	{"StoredPolicies", testStoredPolicies},
	{"GrantsRoundTrip", testGrantsRoundTrip},
	{"RescopeGrants", testRescopeGrants},
	{"GrantUsesAreAtomic", testGrantUsesAreAtomic},
	{"OneUseGrantRace", testOneUseGrantRace},
	{"TokensNeverOverGranted", testTokensNeverOverGranted},
	{"Sessions", testSessions},
	{"SessionLastUsed", testSessionLastUsed},
	{"Changes", testChanges},
	{"ChangesRace", testChangesRace},
	{"Ping", testPing},
}

// Run runs the whole suite against the stores h opens, each case in
// parallel on a store of its own.
func Run(t *testing.T, h Harness) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, h)
		})
	}
}

// fixedClock returns a clock reading *at, for cases that move it.
func fixedClock(at *time.Time) func() time.Time {
	return func() time.Time { return *at }
}
