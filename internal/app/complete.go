package app

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/platform/termtext"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// CompletionKind is what a command's argument names, for shell completion.
type CompletionKind int

// The kinds of names shell completion offers.
const (
	// CompleteSkills offers the registry's skills (show, enable, disable).
	CompleteSkills CompletionKind = iota + 1
	// CompleteInstalls offers the imported skills' installs (review,
	// approve, reject, …).
	CompleteInstalls
	// CompleteTokens offers the ids of the HTTP tokens (token rm).
	CompleteTokens
	// CompleteChanges offers the changes queue's ids (changes show,
	// approve, reject).
	CompleteChanges
)

// maxCompletions bounds the names one Tab lists: a shell shows no more
// usefully, and a registry of 100,000 skills must not print them all.
const maxCompletions = 1000

// maxCompletionDescription bounds the description shown beside a name.
const maxCompletionDescription = 60

// Completions returns the names of kind that start with prefix, sorted,
// each as cobra's completion writes it: "NAME\tDESCRIPTION" (a skill's
// description, an install's state, a token's principal, a change's
// summary). A data directory that does not exist yields none: completing
// never creates one, and never fails a shell with an error.
func (a *App) Completions(ctx context.Context, kind CompletionKind, prefix string) ([]string, error) {
	if _, err := os.Stat(a.Data()); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(name, desc string) {
		if seen[name] || !strings.HasPrefix(name, prefix) || len(out) >= maxCompletions {
			return
		}
		seen[name] = true
		desc = strings.Join(strings.Fields(desc), " ")
		if r := []rune(desc); len(r) > maxCompletionDescription {
			desc = string(r[:maxCompletionDescription-1]) + "…"
		}
		if desc != "" {
			// A description is outside text (a SKILL.md's, a server's):
			// the shell prints it, so it is rendered for a terminal.
			name += "\t" + termtext.Escape(desc)
		}
		out = append(out, name)
	}
	switch kind {
	case CompleteSkills:
		es, err := a.List(ctx, registry.Query{Disabled: true})
		if err != nil {
			return nil, err
		}
		names := map[string]int{}
		for _, e := range es {
			names[e.Name]++
		}
		for _, e := range es {
			if names[e.Name] == 1 {
				add(e.Name, e.Description)
			} else {
				add(e.Key, e.Description) // an ambiguous name: its identity
			}
		}
	case CompleteInstalls:
		svc, closeFn, err := a.OpenInstalls(ctx)
		if err != nil {
			return nil, err
		}
		defer closeFn()
		ss, err := svc.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			add(s.Key, string(s.State))
		}
	case CompleteTokens:
		ts, err := a.Tokens(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			add(t.ID, t.Tenant+"/"+t.Agent+"@"+t.Tier)
		}
	case CompleteChanges:
		items, err := a.Changes(ctx, false)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			add(it.ID, it.Summary)
		}
	}
	slices.Sort(out)
	return out, nil
}
