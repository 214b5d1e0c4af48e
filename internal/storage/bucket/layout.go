package bucket

import (
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// The tenants' part of the bucket, seed 003's layout. Skill trees live
// under
//
//	{tenant}/skills/{category}/{name}/...   (categorised skill)
//	{tenant}/skills/{name}/...              (uncategorised skill)
//
// with the digest each tree holds at {tenant}/skill-versions/{category}/{name}.digest,
// and each session's private workspace under
//
//	{tenant}/sessions/{sessionID}/workspace/...
//
// so one bucket (or directory) serves many tenants, and a tenant's skills can
// be listed with one prefix ([TenantSkillsPrefix]).
const (
	skillsDir   = "skills"
	sessionsDir = "sessions"
	workspace   = "workspace"
)

// TenantSkillsPrefix returns "{tenant}/skills/", the prefix under which all
// of a tenant's skill trees are stored. The error wraps [blob.ErrInvalidKey] when
// tenant is not a single valid key segment.
func TenantSkillsPrefix(tenant string) (string, error) {
	if err := validSegment("tenant", tenant); err != nil {
		return "", err
	}
	return tenant + "/" + skillsDir + "/", nil
}

// SkillPrefix returns the storage prefix of one skill tree, ending in "/":
// "{tenant}/skills/{category}/{name}/", or "{tenant}/skills/{name}/" when
// category is empty. Each of tenant, category and name must be a single valid
// key segment (no slash); the error wraps [blob.ErrInvalidKey] and names the field.
// A skill's identity (tenant + optional category + name) maps to exactly one
// prefix, so "escrituras/compraventa" and "contratos/compraventa" never share
// files.
func SkillPrefix(tenant, category, name string) (string, error) {
	base, err := TenantSkillsPrefix(tenant)
	if err != nil {
		return "", err
	}
	if err := validSegment("name", name); err != nil {
		return "", err
	}
	if category == "" {
		return base + name + "/", nil
	}
	if err := validSegment("category", category); err != nil {
		return "", err
	}
	return base + category + "/" + name + "/", nil
}

// TenantSessionsPrefix returns "{tenant}/sessions/", the prefix under which
// all of a tenant's session workspaces are stored. The error wraps
// [blob.ErrInvalidKey] when tenant is not a single valid key segment.
func TenantSessionsPrefix(tenant string) (string, error) {
	if err := validSegment("tenant", tenant); err != nil {
		return "", err
	}
	return tenant + "/" + sessionsDir + "/", nil
}

// WorkspacePrefix returns "{tenant}/sessions/{sessionID}/workspace/", the
// prefix of one session's private read-write workspace. The error wraps
// [blob.ErrInvalidKey] when tenant or sessionID is not a single valid key segment.
func WorkspacePrefix(tenant, sessionID string) (string, error) {
	if err := validSegment("tenant", tenant); err != nil {
		return "", err
	}
	if err := validSegment("session id", sessionID); err != nil {
		return "", err
	}
	return tenant + "/" + sessionsDir + "/" + sessionID + "/" + workspace + "/", nil
}

func validSegment(field, s string) error {
	if s == "" {
		return fmt.Errorf("%w: %s is empty", blob.ErrInvalidKey, field)
	}
	if strings.Contains(s, "/") {
		return fmt.Errorf("%w: %s %q must be a single segment (no slash)", blob.ErrInvalidKey, field, s)
	}
	if err := blob.ValidateKey(s); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}
