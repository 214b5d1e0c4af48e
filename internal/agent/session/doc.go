// Package session holds agent sessions: who acts (a [Principal]: tenant,
// agent id, agent tier), which skills it has loaded, and its agent
// filesystem ([github.com/skillgate/skillgate/internal/agent/vfs]). Sessions are persisted
// in a [github.com/skillgate/skillgate/internal/storage/store.SessionStore], so a client that
// reconnects with the same session id gets its loaded skills back at the
// same paths, and its /workspace files, which live in blob storage under
// bucket.WorkspacePrefix(tenant, sessionID).
//
// A tour:
//
//	m, _ := session.NewManager(session.Options{
//		Catalog: reg, Versions: db, Store: db, Workspace: blobs,
//	})
//	s, _ := m.Open(ctx, capability.Principal{Tenant: "acme", Agent: "drafter", Tier: skill.T3}, "")
//	defer s.Close()
//	fragment, _ := s.Disclose(ctx, session.DiscloseOptions{})  // the skills it may load
//	l, _ := s.Load(ctx, "escrituras/compraventa")              // l.Mount == "/skills/compraventa"
//	text, _ := s.FS().Read(ctx, l.Mount+"/SKILL.md", 0, 0)
//
// # Who sees what
//
// A principal sees, and can load, only the skills whose invokable_by
// includes its tier (enabled, valid, winning precedence). Loading anything
// else fails with [ErrSkillNotFound], exactly as for a name that does not
// exist, and the filesystem shows nothing of skills that are not loaded.
// The registry is shared by all tenants; the tenant names storage.
//
// # The mount-name rule
//
// A loaded skill appears at /skills/<name>. When another loaded skill
// already occupies /skills/<name> (same leaf name, another category), the
// later one appears at /skills/<category>--<name>, a multi-level category's
// slashes also written "--" (/skills/a--b--<name>). A valid skill name
// never contains "--", so the second form cannot be the first form of
// another skill. Load returns the mount path, mounts never move while the
// skill stays loaded, and they are persisted with the session, so a resumed
// session keeps its paths. Paths resolve by exact mount name only: there is
// no suffix matching (seed 003's bug). When even the second form is taken
// (possible only with names that break the specification, or with an
// uncategorised skill whose name is taken) the load is refused with
// [ErrMountInUse] instead of guessing.
//
// # Where skill files come from
//
// A [Source] mounts the tree of the registry version being loaded:
// [LocalSource] (default) serves exactly the files the scan recorded,
// read-only, from the skill's own directory; [BlobSource] serves them from
// object storage laid out as {tenant}/skills/{category}/{name}/..., which
// it fills from the skill directory on first use of each version.
//
// # Disclosure
//
// [Session.Disclose] is the progressive-disclosure "middleware": with
// nothing loaded, a discovery fragment (the name, description and category
// of every skill the principal may use, within a character budget); with
// skills loaded, their SKILL.md bodies wrapped in <skill_content> with the
// skill directory and a capped listing of its files.
package session
