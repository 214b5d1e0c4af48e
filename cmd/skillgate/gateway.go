package main

import (
	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// storageFlags select where loaded skills and workspaces are stored; see
// [app.Storage].
type storageFlags = app.Storage

func (m *Main) addStorageFlags(c *cobra.Command, sf *storageFlags) {
	f := c.Flags()
	f.StringVar(&sf.Kind, "skills-store", envOr(m.Getenv("SKILLGATE_SKILLS_STORE"), "local"),
		"where agents' skill trees and workspaces live: local (skills from their scanned directories, workspaces in DATA/workspaces) or s3 ($SKILLGATE_SKILLS_STORE)")
	m.addS3Flags(c, sf)
	f.StringArrayVar(&sf.Mounts, "mount", nil, "extra read-only mount for every session, PATH=DIR (e.g. /ticket=./ticket); DIR must exist and is never written to; repeatable")
}

// addS3Flags adds the flags that name the bucket (see docs/storage.md).
func (m *Main) addS3Flags(c *cobra.Command, sf *storageFlags) {
	f := c.Flags()
	f.StringVar(&sf.Endpoint, "s3-endpoint", m.Getenv("SKILLGATE_S3_ENDPOINT"), "S3 endpoint URL, e.g. http://127.0.0.1:7070 ($SKILLGATE_S3_ENDPOINT)")
	f.StringVar(&sf.Bucket, "s3-bucket", m.Getenv("SKILLGATE_S3_BUCKET"), "S3 bucket ($SKILLGATE_S3_BUCKET)")
	f.StringVar(&sf.Region, "s3-region", m.Getenv("SKILLGATE_S3_REGION"), "S3 region (default us-east-1; $SKILLGATE_S3_REGION)")
	f.StringVar(&sf.Prefix, "s3-prefix", m.Getenv("SKILLGATE_S3_PREFIX"), "key prefix inside the bucket, ending in / ($SKILLGATE_S3_PREFIX)")
}

func envOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// principalFlags name the principal of a stdio session.
type principalFlags struct {
	agent, tier, tenant, session string
}

func (m *Main) addPrincipalFlags(c *cobra.Command, pf *principalFlags) {
	f := c.Flags()
	f.StringVar(&pf.agent, "agent", m.Getenv("SKILLGATE_AGENT"), "agent id ($SKILLGATE_AGENT)")
	f.StringVar(&pf.tier, "tier", m.Getenv("SKILLGATE_TIER"), "agent tier, T0–T4 ($SKILLGATE_TIER)")
	f.StringVar(&pf.tenant, "tenant", envOr(m.Getenv("SKILLGATE_TENANT"), "default"), "tenant ($SKILLGATE_TENANT)")
	f.StringVar(&pf.session, "session", m.Getenv("SKILLGATE_SESSION"), "session id to resume or start; empty starts a new one ($SKILLGATE_SESSION)")
}

// principal validates the principal flags; problems are usage errors.
func (pf *principalFlags) principal() (capability.Principal, error) {
	return app.StdioPrincipal(pf.agent, pf.tier, pf.tenant, pf.session)
}
