package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/platform/plural"
)

func (m *Main) addCommand() *cobra.Command {
	var req app.AddRequest
	var ref, sub string
	var list, asJSON bool
	c := &cobra.Command{
		Use:   "add SOURCE [--list] [--skill NAME]... [--all] [--ref REF] [--path DIR] [--json]",
		Short: "List the skills of a git repository, or install some or all of them for review",
		Long: `Read the skills a git repository holds (every folder with a SKILL.md) and
install one, several or all of them, each through the install flow: the
same fetch, analysis, review and approval as 'skillgate install'.

SOURCE is OWNER/REPO[/PATH][@REF] (a GitHub repository: PATH is the folder
to look in, REF a branch, tag or commit), gitlab:OWNER/REPO[/PATH][@REF]
(gitlab.com), an https:// git URL of any host (http:// only on loopback;
it may end in REPO.git/PATH@REF, and a GitHub or GitLab folder page,
https://github.com/O/R/tree/REF/PATH, is read as such), a file:// URL or
the path of a local repository; --ref and --path give the
ref and folder for a URL or a path (and override a shorthand's). SSH URLs
are not fetched: use the https:// URL.

--list prints the skills found (name, folder, description; --json:
{source, ref, path, commit, skills: [{name, path, description, valid,
errors}]}) and installs nothing. Otherwise --skill NAME (repeatable; a
skill's name or folder name) or --all chooses what to install; a repository
with one skill needs neither. Each install prints its review (--json: an
array of the reviews) and ends awaiting approval or blocked, as 'install'
does; see 'skillgate review', 'approve' and 'enable'.

Exit codes: 0 listed or all installed awaiting approval, 1 failure (a ref or
folder that does not exist, no skill, an install refused or blocked), 2
usage error (several skills and no choice, an unknown --skill).`,
		Example: "  skillgate add acme/skills --list\n  skillgate add acme/skills/legal@v1.2 --skill contratos --skill escrituras\n  skillgate add gitlab:acme/skills --all\n  skillgate add https://git.example.com/skills.git --ref main --path tools --skill pdf",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rs, err := app.ParseRepoSource(args[0], ref, sub)
			if err != nil {
				return err
			}
			if list {
				if len(req.Skills) > 0 || req.All {
					return usageErr("add: --list installs nothing; give it without --skill or --all")
				}
				m.app().ShowProgress(m.Stderr, asJSON)
				l, err := m.app().ListRepo(ctx, rs)
				if err != nil {
					return installErr(err)
				}
				if asJSON {
					return jsonout.Write(m.Stdout, l)
				}
				return l.WriteText(m.Stdout)
			}
			req.Repo = rs
			m.app().ShowProgress(m.Stderr, asJSON)
			svc, closeFn, err := m.app().OpenInstalls(ctx)
			if err != nil {
				return err
			}
			defer closeFn()
			failed, done := 0, 0
			reviews := []*install.Review{}
			err = m.app().Add(ctx, svc, req, func(r app.AddResult) {
				done++
				if r.Err != nil {
					failed++
					fmt.Fprintf(m.Stderr, "Error: %s (%s): %v\n", r.Skill.Name, pathOrTop(r.Skill.Path), r.Err)
					return
				}
				if app.Blocked(r.Review) {
					failed++
				}
				if asJSON {
					reviews = append(reviews, r.Review)
					return
				}
				fmt.Fprint(m.Stdout, r.Review.Text())
			})
			if err != nil {
				var ue *app.UsageError
				if errors.As(err, &ue) {
					return err
				}
				return installErr(err)
			}
			if asJSON {
				if err := jsonout.Write(m.Stdout, reviews); err != nil {
					return err
				}
			}
			if failed > 0 {
				return &exitError{code: exitFail, err: fmt.Errorf("add: %d of %s refused or blocked; the reviews say what to fix", failed, plural.Of(done, "install", "installs"))}
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&list, "list", false, "list the repository's skills and install nothing")
	f.StringArrayVar(&req.Skills, "skill", nil, "install this skill (its name or folder name); repeatable")
	f.BoolVar(&req.All, "all", false, "install every skill the repository holds")
	f.StringVar(&ref, "ref", "", "the branch, tag or commit to read (default the repository's HEAD, or SOURCE's @REF)")
	f.StringVar(&sub, "path", "", "the repository's folder to look for skills in (default its top level, or SOURCE's /PATH)")
	f.BoolVar(&asJSON, "json", false, "print the listing, or the installs' reviews, as JSON")
	m.introspectionFlags(&req.Intro)(c)
	m.packageFlags(&req.Scripts, &req.ScriptsWhy)(c)
	return c
}

// pathOrTop names a repository folder in a message.
func pathOrTop(p string) string {
	if p == "" {
		return "the top level"
	}
	return p
}
