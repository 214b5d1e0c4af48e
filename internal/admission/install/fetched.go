package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// installFetched is InstallFrom once src has been read into tree.
func (s *Service) installFetched(ctx context.Context, src Source, tree *Tree, prov Provenance, actor string, intro Introspection) (*Review, error) {
	if src.Commit != "" && prov.Commit != src.Commit {
		return nil, fmt.Errorf("%w: %s: ref %s moved: the lock has commit %s, the repository now has %s; nothing was installed", ErrLocked, prov.Source, prov.Ref, src.Commit, prov.Commit)
	}
	if err := checkTop(src, prov, tree); err != nil {
		return nil, err
	}
	sk, cfg, err := validateTree(tree)
	if err != nil {
		return nil, err
	}
	content := skill.DigestBytes(tree.Files)
	prov.Digest = content
	if err := s.checkSignature(ctx, tree, sk.Name, content, &prov, actor); err != nil {
		return nil, err
	}
	for name, why := range intro.AllowScripts {
		if err := checkWhy("--allow-scripts "+name+" --why", why); err != nil {
			return nil, err
		}
	}
	// The packages its servers launch are fetched and pinned before
	// anything is stored: they are part of the version.
	staging, pkgs, err := s.fetchPackages(ctx, sk.ID(), cfg, src.Packages, intro.AllowScripts)
	if err != nil {
		return nil, err
	}
	if staging != "" {
		defer os.RemoveAll(staging)
	}
	digest := launch.VersionDigest(content, pkgs)
	prov.Packages = pkgs
	if digest != content {
		prov.Version = digest
	}
	if cur := src.current; cur != nil && digest == cur.Digest {
		return nil, fmt.Errorf("%w: %s %s is what %s holds, its packages included", ErrUpToDate, cur.Key, cur.Digest, prov.Source)
	}
	if src.Digest != "" && digest != src.Digest {
		what := "content digest"
		if len(pkgs) > 0 {
			what = "digest of the content and the packages its servers launch"
		}
		return nil, fmt.Errorf("%w: %s: the %s is %s, the lock has %s; nothing was installed", ErrLocked, prov.Source, what, digest, src.Digest)
	}
	provJSON, err := json.Marshal(prov)
	if err != nil {
		return nil, err
	}
	unlock, err := s.storage.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	prev, err := s.st.Installs(ctx, store.InstallFilter{Digest: digest})
	if err != nil {
		return nil, err
	}
	if len(prev) == 1 {
		switch prev[0].State {
		case store.StatePendingInstall, store.StateAnalyzing:
			if _, err := os.Stat(filepath.Join(prev[0].Dir, SkillDir)); err == nil {
				return s.analyzeLocked(ctx, prev[0], actor, "resumed: the earlier install was interrupted", intro)
			}
		case store.StateRemoved, store.StateRejected:
		default:
			return nil, fmt.Errorf("%w: %s version %s is already %s; see skillgate review %s", ErrState, prev[0].Key, digest, prev[0].State, prev[0].Key)
		}
	}
	dir, err := s.storage.writeTree(tree, digest, staging, s.crash)
	if err != nil {
		return nil, err
	}
	s.crash("install-after-copy")
	from := src.Location
	if !isRemote(from) {
		from, _ = filepath.Abs(from)
	} else {
		from = prov.Source
	}
	inv := make([]string, len(sk.InvokableBy))
	for i, t := range sk.InvokableBy {
		inv[i] = string(t)
	}
	why := "installed from " + from
	if prov.Commit != "" {
		why += " at " + prov.Commit
	}
	in, err := s.st.CreateInstall(ctx, store.Install{Key: sk.ID(), Name: sk.Name, Category: sk.Category, Description: sk.Description,
		Label: sk.Version, Digest: digest, Tier: sk.Tier, InvokableBy: inv, Dir: dir, Source: from, Provenance: provJSON},
		why, changeRecord(actor, "", why, store.StatePendingInstall, packagesAudit(pkgs)), audit.SealStored)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.log.Info("install: recorded", "key", in.Key, "digest", digest, "dir", dir)
	s.crash("install-after-row")
	r, err := s.analyzeLocked(ctx, in, actor, "analysis started", intro)
	if err == nil {
		s.queuePromotions(ctx, in.Key, actor)
	}
	return r, err
}

// maxSkillsListed bounds the skills a source without SKILL.md at its
// root lists in its error.
const maxSkillsListed = 20

// checkTop refuses a source without SKILL.md at its root that holds
// skills further down (a repository or directory of several skills): the
// error (ErrInvalidSkill) says so, lists the skills found and the command
// that installs each, with --path for a git source, or by its directory
// for a local one. A source holding no skill at all is left to
// validateTree.
func checkTop(src Source, prov Provenance, t *Tree) error {
	var dirs []string
	for p := range t.Files {
		if slices.Contains(skill.FileNames, p) {
			return nil
		}
		if dir, base := path.Split(p); dir != "" && slices.Contains(skill.FileNames, base) {
			dirs = append(dirs, strings.TrimSuffix(dir, "/"))
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	n := len(dirs)
	var cmds []string
	for _, d := range dirs[:min(n, maxSkillsListed)] {
		switch {
		case prov.Kind == "git":
			ref := ""
			if src.Ref != "" {
				ref = " --ref " + src.Ref
			}
			cmds = append(cmds, "  skillgate install"+ref+" --path "+path.Join(prov.Path, d)+" "+prov.Source)
		case prov.Kind == "directory":
			cmds = append(cmds, "  skillgate install "+filepath.Join(src.Location, filepath.FromSlash(d)))
		default:
			cmds = append(cmds, "  "+d)
		}
	}
	where, how := src.Location, "install one by its directory"
	switch prov.Kind {
	case "git":
		where, how = prov.Source, "install one with --path"
		if prov.Path != "" {
			where += " --path " + prov.Path
		}
	case "archive", "url":
		how = "unpack it and install one by its directory"
	}
	more := ""
	if n > maxSkillsListed {
		more = fmt.Sprintf("\n  … and %d more", n-maxSkillsListed)
	}
	return fmt.Errorf("%w: %s has no SKILL.md at its root; it holds %s; %s:\n%s%s", ErrInvalidSkill, where,
		plural.Of(n, "skill", "skills"), how, strings.Join(cmds, "\n"), more)
}

// validateTree checks a skill tree: SKILL.md valid in lenient mode and
// mcp.json, when present, well formed.
func validateTree(t *Tree) (*skill.Skill, *mcpclient.Config, error) {
	var content []byte
	found := false
	for _, n := range skill.FileNames {
		if b, ok := t.Files[n]; ok {
			content, found = b, true
			break
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("%w: %s: missing required file SKILL.md at the top of the skill", ErrInvalidSkill, t.Name)
	}
	sk := skill.Parse(content, t.Name, skill.Options{Mode: skill.Lenient})
	if !sk.Valid() {
		return nil, nil, fmt.Errorf("%w: %s/SKILL.md: %s", ErrInvalidSkill, t.Name, strings.Join(sk.Errors(), "; "))
	}
	cfg := &mcpclient.Config{}
	if b, ok := t.Files[MCPConfigFile]; ok {
		c, err := mcpclient.ParseConfig(b)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s/%s: %w", ErrInvalidSkill, t.Name, MCPConfigFile, err)
		}
		cfg = c
	}
	return sk, cfg, nil
}
