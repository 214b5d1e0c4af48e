package discover

import "path/filepath"

// TenantOf returns the tenant whose library holds a skill recorded with
// scope and root (store.Version.Scope and .Root), or "" for a skill every
// tenant may see. A tenant library's root is a directory named after its
// tenant (package library lays them out as DIR/{tenant}), so the tenant
// is the root's last element.
func TenantOf(scope, root string) string {
	if scope != ScopeTenant.String() || root == "" {
		return ""
	}
	return filepath.Base(root)
}

// ScopeRank orders recorded scope names for precedence, lowest first; an
// unknown name ranks below every scope. Unlike [ParseScope] it knows
// "tenant", which only package library assigns.
func ScopeRank(name string) int {
	if name == ScopeTenant.String() {
		return int(ScopeTenant)
	}
	sc, err := ParseScope(name)
	if err != nil {
		return -1
	}
	return int(sc)
}
