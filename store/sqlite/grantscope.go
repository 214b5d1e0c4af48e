package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/constraint"
)

// Capability ids name their skill ("notes:fs/write_file") since skills may
// share server ids; grants stored before that named only the server and the
// tool ("fs/write_file") and so covered that tool in every skill that names
// a server "fs". scopeGrants rewrites every such grant that is still in
// force, when the store is opened, in one transaction with one "grant.scope"
// audit record per grant saying what happened (actor "system"):
//
//   - a pattern whose server part has a '*' ("*", "*/read_file") was
//     written to span servers; it becomes "*:" + pattern, which matches
//     exactly the capabilities it matched before;
//   - otherwise, when the capabilities the pattern matches belong to one
//     installed skill (any install with an approved manifest that is not
//     removed or rejected), the grant is bound to that skill;
//   - otherwise (several skills, or none) it is revoked: binding it to one
//     of them would be a guess, and to all of them would keep the leak. The
//     record lists the candidates; an operator grants again the one meant.
//
// Grants already in the new form are left alone, so this runs once per
// grant; a store without old grants costs one query.
func (s *DB) scopeGrants(ctx context.Context) error {
	const old = `FROM grants WHERE revoked_at = 0 AND capability <> '*' AND instr(capability, ':') = 0`
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) `+old).Scan(&n); err != nil {
		return fmt.Errorf("scope grants: %w", err)
	}
	if n == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		offered, err := installedCapabilities(ctx, tx)
		if err != nil {
			return fmt.Errorf("scope grants: %w", err)
		}
		type oldGrant struct{ id, principal, capability string }
		rows, err := tx.QueryContext(ctx, `SELECT id, principal, capability `+old+` ORDER BY created_at, id`)
		if err != nil {
			return fmt.Errorf("scope grants: %w", err)
		}
		var grants []oldGrant
		for rows.Next() {
			var g oldGrant
			if err := rows.Scan(&g.id, &g.principal, &g.capability); err != nil {
				rows.Close()
				return fmt.Errorf("scope grants: %w", err)
			}
			grants = append(grants, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("scope grants: %w", err)
		}
		now := s.Now()
		for _, g := range grants {
			to, why := scopeGrant(g.capability, offered)
			data := map[string]any{"grant": g.id, "principal": g.principal, "from": g.capability}
			if to != "" {
				data["to"] = to
				_, err = tx.ExecContext(ctx, `UPDATE grants SET capability = ? WHERE id = ?`, to, g.id)
			} else {
				data["revoked"] = true
				_, err = tx.ExecContext(ctx, `UPDATE grants SET revoked_at = ? WHERE id = ?`, now.UnixNano(), g.id)
			}
			if err != nil {
				return fmt.Errorf("scope grant %s: %w", g.id, err)
			}
			subject := to
			if subject == "" {
				subject = g.capability
			}
			if err := auditGrant(ctx, tx, now, "system", "grant.scope", subject, why, data); err != nil {
				return fmt.Errorf("scope grant %s: %w", g.id, err)
			}
		}
		return nil
	})
}

// scopeGrant decides the new form of an old grant pattern: the pattern to
// store, or "" to revoke it, and why, for the audit record. offered maps
// each installed skill to its capabilities' "server/tool" names.
func scopeGrant(pattern string, offered map[string][]string) (to, why string) {
	ext, _, _ := strings.Cut(pattern, "/")
	if strings.Contains(ext, "*") {
		return "*:" + pattern, fmt.Sprintf("capability ids now name their skill; %s spans servers, so it now reads *:%s and covers exactly what it covered before", pattern, pattern)
	}
	var skills []string
	for sk, names := range offered {
		if slices.ContainsFunc(names, func(n string) bool { return constraint.MatchWildcard(pattern, n) }) {
			skills = append(skills, sk)
		}
	}
	slices.Sort(skills)
	switch len(skills) {
	case 1:
		return skills[0] + ":" + pattern, fmt.Sprintf("capability ids now name their skill; %s is offered only by skill %s, so the grant is bound to it", pattern, skills[0])
	case 0:
		return "", fmt.Sprintf("capability ids now name their skill; no installed skill offers %s, so the grant was revoked rather than left to cover a skill installed later; grant it again as skill:%s", pattern, pattern)
	}
	var cands []string
	for _, sk := range skills {
		cands = append(cands, sk+":"+pattern)
	}
	return "", fmt.Sprintf("capability ids now name their skill; %s is offered by %d skills (%s), so the grant was revoked rather than extended to all of them; grant it again for the one meant", pattern, len(skills), strings.Join(cands, ", "))
}

// installedCapabilities returns, per skill key, the "server/tool" names of
// the approved manifests of installs that are not removed or rejected.
func installedCapabilities(ctx context.Context, tx *sql.Tx) (map[string][]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT key, manifest FROM installs WHERE manifest IS NOT NULL AND state NOT IN ('removed', 'rejected')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var key, raw string
		if err := rows.Scan(&key, &raw); err != nil {
			return nil, err
		}
		var m struct {
			Capabilities []struct {
				ExtensionID  string `json:"extensionId"`
				CapabilityID string `json:"capabilityId"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("manifest of %s: %w", key, err)
		}
		for _, c := range m.Capabilities {
			out[key] = append(out[key], c.ExtensionID+"/"+c.CapabilityID)
		}
	}
	return out, rows.Err()
}
