package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/plural"
)

// ErrNoSkill is returned by [ListRepoSkills] for a repository (or a PATH
// of it) that holds no SKILL.md.
var ErrNoSkill = errors.New("no skill")

// shorthandRepo is OWNER/REPO[/PATH][@REF] as 'skillgate add' reads it:
// GitHub's owner and repository name characters, a relative path, a ref.
var shorthandRepo = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)/([A-Za-z0-9._-]+?)(?:\.git)?((?:/[^@]+)?)(?:@([^@]+))?$`)

// scpLikeSSH is git's scp-like SSH syntax, USER@HOST:PATH.
var scpLikeSSH = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:`)

// RepoSource is where 'skillgate add' reads skills from: a git repository,
// the ref to read and the folder of it to look in.
type RepoSource struct {
	// Location is the repository as the install flow fetches it:
	// git+https://…, git+http://… (loopback) or file://….
	Location string `json:"source"`
	// Ref is the branch, tag or commit ("" is the repository's HEAD).
	Ref string `json:"ref,omitempty"`
	// Path is the folder of the repository the skills are looked for
	// under ("" is its top level).
	Path string `json:"path,omitempty"`
}

// ParseRepoSource reads the SOURCE of 'skillgate add': OWNER/REPO[/PATH][@REF]
// (GitHub), gitlab:OWNER/REPO[/PATH][@REF] or github:… (the host named), an
// https:// or http:// (loopback) git URL, with or without git+, or a
// file:// URL (a URL's path may end in REPO.git/PATH@REF), or a local
// path to a repository. ref and sub, when not
// empty, are --ref and --path, which a URL or a path takes instead of
// @REF and /PATH (and which override a shorthand's). An SSH URL is
// refused: the install flow fetches over https, http on loopback and
// file only. Errors are [UsageError]s that say what to write.
func ParseRepoSource(src, ref, sub string) (RepoSource, error) {
	var rs RepoSource
	host := "github.com"
	rest := src
	switch {
	case strings.HasPrefix(src, "gitlab:"):
		host, rest = "gitlab.com", strings.TrimPrefix(src, "gitlab:")
	case strings.HasPrefix(src, "github:"):
		rest = strings.TrimPrefix(src, "github:")
	}
	switch {
	case strings.HasPrefix(src, "ssh://") || scpLikeSSH.MatchString(src):
		return rs, Usagef("add: %s: SSH sources are not fetched; use the repository's https:// URL", src)
	case strings.HasPrefix(src, "git+https://"), strings.HasPrefix(src, "git+http://"), strings.HasPrefix(src, "file://"):
		rs = splitURL(src)
	case strings.HasPrefix(src, "https://"), strings.HasPrefix(src, "http://"):
		rs = splitURL("git+" + src)
	case rest != src || !looksLocal(src):
		m := shorthandRepo.FindStringSubmatch(rest)
		if m == nil {
			return rs, Usagef("add: %q is not OWNER/REPO[/PATH][@REF], gitlab:OWNER/REPO…, a git URL or a local repository", src)
		}
		rs.Location = "git+https://" + host + "/" + m[1] + "/" + m[2] + ".git"
		rs.Path, rs.Ref = strings.Trim(m[3], "/"), m[4]
	default:
		abs, err := filepath.Abs(src)
		if err != nil {
			return rs, fmt.Errorf("add: %s: %w", src, err)
		}
		rs.Location = "file://" + filepath.ToSlash(abs)
	}
	if ref != "" {
		rs.Ref = ref
	}
	if sub != "" {
		rs.Path = strings.Trim(sub, "/")
	}
	return rs, nil
}

// splitURL reads a git URL's @REF (after the last / of its path) and
// /PATH (after a path element ending in .git): https://host/o/r.git/skills@v1
// is https://host/o/r.git, PATH skills, REF v1.
//
// A github.com or gitlab.com page of a folder, as a browser shows it
// (https://github.com/O/R/tree/REF/PATH, https://gitlab.com/O/R/-/tree/REF/PATH),
// is its repository, REF and PATH (a REF with a slash cannot be told from
// its PATH there: use --ref and --path).
func splitURL(loc string) RepoSource {
	var rs RepoSource
	scheme, rest, _ := strings.Cut(loc, "://")
	host, p, _ := strings.Cut(rest, "/")
	if host == "github.com" || host == "gitlab.com" {
		sep := "/tree/"
		if host == "gitlab.com" {
			sep = "/-/tree/"
		}
		if repo, tree, ok := strings.Cut(p, sep); ok && strings.Count(repo, "/") == 1 {
			ref, sub, _ := strings.Cut(tree, "/")
			rs.Location = scheme + "://" + host + "/" + strings.TrimSuffix(repo, ".git") + ".git"
			rs.Ref, rs.Path = ref, strings.Trim(sub, "/")
			return rs
		}
	}
	if i := strings.LastIndex(p, "@"); i >= 0 && !strings.Contains(p[i:], "/") {
		p, rs.Ref = p[:i], p[i+1:]
	}
	if i := strings.Index(p, ".git/"); i >= 0 {
		p, rs.Path = p[:i+len(".git")], strings.Trim(p[i+len(".git/"):], "/")
	}
	rs.Location = scheme + "://" + host + "/" + p
	return rs
}

// looksLocal reports whether src names a local path: it exists, or it is
// written as one (absolute, ./ or ../).
func looksLocal(src string) bool {
	if strings.HasPrefix(src, "/") || strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") || src == "." {
		return true
	}
	_, err := os.Stat(src)
	return err == nil
}

// RepoSkill is one skill a repository holds.
type RepoSkill struct {
	// Name is the skill's name: its frontmatter's, else its folder's.
	Name string `json:"name"`
	// Path is its folder in the repository ("" for the top level).
	Path string `json:"path"`
	// Description is its frontmatter's description.
	Description string `json:"description"`
	// Valid is false when its SKILL.md does not pass validation as
	// discovery judges it; Errors then says why (install would refuse it).
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors"`
}

// RepoListing is what 'skillgate add --list' prints.
type RepoListing struct {
	RepoSource
	// Commit is the commit Ref resolved to.
	Commit string `json:"commit"`
	// Skills are the skills found, sorted by path.
	Skills []RepoSkill `json:"skills"`
}

// WriteText renders l as a table, one skill a line.
func (l *RepoListing) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPATH\tDESCRIPTION")
	for _, s := range l.Skills {
		p := s.Path
		if p == "" {
			p = "."
		}
		d := s.Description
		if !s.Valid {
			d = "invalid: " + strings.Join(s.Errors, "; ")
		}
		if r := []rune(d); len(r) > 80 {
			d = string(r[:79]) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, p, d)
	}
	return tw.Flush()
}

// ListRepoSkills fetches rs (the install flow's git fetch: a shallow fetch
// of the ref and an archive of the folder, within the install source
// bounds) and returns the skills under it: every folder holding a
// SKILL.md. A repository or folder with none is [ErrNoSkill]; a ref or
// folder that does not exist, or a tree over the bounds, is the fetch's
// error ([install.ErrInvalidSource]).
func ListRepoSkills(ctx context.Context, rs RepoSource) (*RepoListing, error) {
	tree, prov, err := install.Fetch(ctx, install.Source{Location: rs.Location, Ref: rs.Ref, Path: rs.Path}, install.SourceLimits{}, time.Now())
	if err != nil {
		return nil, fmt.Errorf("add: %w", err)
	}
	l := &RepoListing{RepoSource: rs, Commit: prov.Commit, Skills: []RepoSkill{}}
	if l.Ref == "" {
		l.Ref = prov.Ref
	}
	seen := map[string]bool{}
	for _, p := range sortedKeys(tree.Files) {
		dir := path.Dir(p)
		if !slices.Contains(skill.FileNames, path.Base(p)) || seen[dir] {
			continue // the first of SKILL.md and skill.md, as discovery reads
		}
		seen[dir] = true
		data := tree.Files[p]
		if dir == "." {
			dir = ""
		}
		dirName := path.Base(dir)
		if dir == "" {
			dirName = tree.Name
		}
		s := skill.Parse(data, dirName, skill.Options{SkipBody: true})
		rsk := RepoSkill{Name: s.Name, Path: path.Join(rs.Path, dir), Description: s.Description, Valid: s.Valid(), Errors: nonNil(s.Errors())}
		if rsk.Name == "" {
			rsk.Name = dirName
		}
		l.Skills = append(l.Skills, rsk)
	}
	if len(l.Skills) == 0 {
		where := "its top level"
		if rs.Path != "" {
			where = rs.Path
		}
		return nil, fmt.Errorf("add: %w: %s at %s has no SKILL.md under %s; give the PATH of a folder that holds skills", ErrNoSkill, rs.Location, prov.Commit, where)
	}
	slices.SortFunc(l.Skills, func(a, b RepoSkill) int { return strings.Compare(a.Path, b.Path) })
	return l, nil
}

// SelectRepoSkills picks the skills of l that 'skillgate add' installs:
// all with all, else those named (by name or by the last element of
// their path), else the only one. Several skills and no choice, a name
// that matches none, or names with all, are [UsageError]s listing what
// there is.
func SelectRepoSkills(l *RepoListing, names []string, all bool) ([]RepoSkill, error) {
	var list []string
	for _, s := range l.Skills {
		list = append(list, s.Name)
	}
	switch {
	case all && len(names) > 0:
		return nil, Usagef("add: give --skill NAME or --all, not both")
	case all:
		return l.Skills, nil
	case len(names) == 0 && len(l.Skills) == 1:
		return l.Skills, nil
	case len(names) == 0:
		return nil, Usagef("add: %s holds %s (%s): name those to install with --skill NAME, or give --all; --list describes them",
			l.Location, plural.Of(len(l.Skills), "skill", "skills"), strings.Join(list, ", "))
	}
	var out []RepoSkill
	for _, n := range names {
		i := slices.IndexFunc(l.Skills, func(s RepoSkill) bool { return s.Name == n || (s.Path != "" && path.Base(s.Path) == n) })
		if i < 0 {
			return nil, Usagef("add: %s holds no skill %q; it holds %s", l.Location, n, strings.Join(list, ", "))
		}
		if !slices.ContainsFunc(out, func(s RepoSkill) bool { return s.Path == l.Skills[i].Path }) {
			out = append(out, l.Skills[i])
		}
	}
	return out, nil
}

// ListRepo is [ListRepoSkills] with the fetch shown on the progress line
// of [App.ShowProgress], cleared when it ends.
func (a *App) ListRepo(ctx context.Context, rs RepoSource) (*RepoListing, error) {
	a.showStep("fetching " + rs.Location)
	defer a.EndProgress()
	return ListRepoSkills(ctx, rs)
}

// showStep draws step on the progress line of [App.ShowProgress], if any.
func (a *App) showStep(step string) {
	if a.steps != nil {
		a.steps.show(step)
	}
}

// AddRequest is one 'skillgate add' of skills from a repository.
type AddRequest struct {
	// Repo is the repository, ref and folder.
	Repo RepoSource
	// Skills names the skills to install; All installs every one.
	Skills []string
	All    bool
	// Intro, Scripts and ScriptsWhy are install's introspection and
	// install-script flags, applied to every skill.
	Intro      install.Introspection
	Scripts    []string
	ScriptsWhy string
}

// AddResult is the outcome of installing one skill of a repository.
type AddResult struct {
	Skill  RepoSkill
	Review *install.Review
	Err    error
}

// Add lists the skills of r.Repo, selects those r names (see
// [SelectRepoSkills]) and installs each through the install flow, the
// fetch and each install shown on the progress line of [App.ShowProgress]
// (install.Service.InstallFrom, the same fetch, analysis and review as
// 'skillgate install git+URL --ref REF --path P'), one after the other.
// each is called with every outcome as it ends; an install's refusal
// does not stop the others. The returned error is the listing's or the
// selection's.
func (a *App) Add(ctx context.Context, svc *install.Service, r AddRequest, each func(AddResult)) error {
	allow, err := AllowScripts(r.Scripts, r.ScriptsWhy)
	if err != nil {
		return err
	}
	r.Intro.AllowScripts = allow
	l, err := a.ListRepo(ctx, r.Repo)
	if err != nil {
		return err
	}
	chosen, err := SelectRepoSkills(l, r.Skills, r.All)
	if err != nil {
		return err
	}
	for i, s := range chosen {
		if err := ctx.Err(); err != nil {
			return err
		}
		a.showStep(fmt.Sprintf("installing %d of %d: %s", i+1, len(chosen), s.Name))
		rev, err := svc.InstallFrom(ctx, install.Source{Location: r.Repo.Location, Ref: r.Repo.Ref, Path: s.Path}, a.Actor(), r.Intro)
		a.EndProgress()
		each(AddResult{Skill: s, Review: rev, Err: err})
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
