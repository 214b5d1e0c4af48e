package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blobsync"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// ErrSkillChanged is the error of a load refused because the skill's files
// no longer hash to the digest the registry recorded at the scan.
var ErrSkillChanged = errors.New("skill changed since it was scanned")

// checkContent hashes the skill's files again, as recorded at the scan
// and read without following links, and refuses a skill whose digest is
// not the recorded one: one byte changed after the scan (or a signature's
// subject) is never served. A refusal is audited. What is hashed is what
// the session will read: the skill's directory when it is mounted from
// there, else the mounted copy, st and prefix (object storage: a replica
// serving the mirror of the scanned roots, or the copy another process
// uploaded when it loaded this version, which stays loadable as scanned
// while the directory holds a newer, unscanned edit).
func (m *Manager) checkContent(ctx context.Context, p capability.Principal, v store.Version, st blob.Store, prefix string) error {
	if v.Digest == "" || v.Dir == "" {
		return nil
	}
	var found string
	var err error
	if _, local := st.(*tree); local {
		found, err = treeDigest(ctx, v)
	} else {
		found, err = mountedDigest(ctx, v, st, prefix)
	}
	if err == nil && found == v.Digest {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	why := fmt.Sprintf("its files no longer hash to %s", v.Digest)
	if err != nil {
		why = fmt.Sprintf("its files cannot be hashed as recorded (%v)", err)
	}
	reason := fmt.Sprintf("%s: %s; an operator must scan again before it can be loaded", v.Key, why)
	m.log.WarnContext(ctx, "load refused: skill changed since the scan", "principal", p.String(), "skill", v.Key, "recorded", v.Digest, "found", found, "err", err)
	if m.opts.Audit != nil {
		data, _ := json.Marshal(map[string]string{"recorded": v.Digest, "found": found, "dir": v.Dir})
		if _, aerr := m.opts.Audit.AppendAudit(ctx, audit.SealStored, store.AuditRecord{Actor: "agent:" + p.Tenant + "/" + p.Agent,
			Action: "skill.load", Subject: v.Key, Decision: capability.Deny, Reasons: []string{"content changed since the scan: " + why}, Data: data}); aerr != nil {
			m.log.ErrorContext(ctx, "audit of a refused load failed", "skill", v.Key, "err", aerr)
		}
	}
	return fmt.Errorf("%w: %s", ErrSkillChanged, reason)
}

// mountedDigest is the content digest of v's recorded files as mounted.
func mountedDigest(ctx context.Context, v store.Version, st blob.Store, prefix string) (string, error) {
	var files []skill.File
	if len(v.Files) > 0 {
		if err := json.Unmarshal(v.Files, &files); err != nil {
			return "", fmt.Errorf("file list: %w", err)
		}
	}
	plain := make([]skill.File, len(files))
	for i, f := range files {
		plain[i] = skill.File{Path: f.Path, Size: f.Size}
	}
	skill.SortFiles(plain)
	return blobsync.Digest(ctx, st, prefix, plain)
}

// treeDigest is the content digest of v's recorded files as they are now.
func treeDigest(ctx context.Context, v store.Version) (string, error) {
	var files []skill.File
	if len(v.Files) > 0 {
		if err := json.Unmarshal(v.Files, &files); err != nil {
			return "", fmt.Errorf("file list: %w", err)
		}
	}
	tree, err := discover.OpenTree(v.Dir)
	if err != nil {
		return "", err
	}
	defer tree.Close()
	return skill.DigestWith(ctx, tree, files, "", nil)
}
