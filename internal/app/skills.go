package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/secscan"
	"github.com/skillgate/skillgate/internal/agent/catalog"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/registry/signature"
)

// ValidateResult is the verdict on one skill (validate --json prints
// them).
type ValidateResult struct {
	Path        string             `json:"path"`
	Valid       bool               `json:"valid"`
	Mode        string             `json:"mode"`
	Name        string             `json:"name,omitempty"`
	Errors      []string           `json:"errors"`
	Warnings    []string           `json:"warnings"`
	Diagnostics []skill.Diagnostic `json:"diagnostics"`
	Skill       *skill.Skill       `json:"skill,omitempty"`
}

// Validate validates dirs on one worker per CPU, keeping their order.
func Validate(ctx context.Context, dirs []string, mode skill.Mode) ([]ValidateResult, error) {
	results := make([]ValidateResult, len(dirs))
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, runtime.GOMAXPROCS(0))
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(dirs) {
					return
				}
				s, err := skill.Load(ctx, dirs[i], skill.Options{Mode: mode})
				if err != nil {
					errs <- err
					return
				}
				r := ValidateResult{Path: dirs[i], Valid: s.Valid(), Mode: mode.String(), Name: s.Name,
					Errors: nonNil(s.Errors()), Warnings: nonNil(s.Warnings()), Diagnostics: nonNil(s.Diagnostics)}
				if s.Valid() {
					// One shape: lists are arrays, never null, at the top
					// and inside skill alike.
					s.Diagnostics, s.InvokableBy = r.Diagnostics, nonNil(s.InvokableBy)
					r.Skill = s
				}
				results[i] = r
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	return results, nil
}

// nonNil is s, or an empty slice when s is nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// List opens the registry and runs one query.
func (a *App) List(ctx context.Context, q registry.Query) ([]registry.Entry, error) {
	reg, closeFn, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return reg.List(ctx, q)
}

// CatalogItems are registry entries as catalog items.
func CatalogItems(es []registry.Entry) []catalog.Item {
	out := make([]catalog.Item, 0, len(es))
	for _, e := range es {
		out = append(out, catalog.Item{Name: e.Name, Description: e.Description, Tier: e.Tier, InvokableBy: e.InvokableBy,
			Source: e.Root, Category: e.Category, Version: e.Version.Version, Trust: e.Trust, Location: e.File})
	}
	return out
}

// ReadProperties is skills-ref's read_properties: the frontmatter read
// strictly, name and description required, no further validation.
func ReadProperties(p string) (catalog.Item, error) {
	dir := skill.ResolvePath(p)
	abs, err := filepath.Abs(dir)
	if err == nil {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
	}
	b, name, err := skill.ReadFile(abs)
	if name == "" {
		return catalog.Item{}, fmt.Errorf("SKILL.md not found in %s", dir)
	}
	if err != nil {
		return catalog.Item{}, fmt.Errorf("%s: %w", dir, err)
	}
	s := skill.Parse(b, filepath.Base(abs), skill.Options{Mode: skill.Strict})
	if s.Frontmatter == nil {
		return catalog.Item{}, fmt.Errorf("%s: %s", dir, strings.Join(s.Errors(), "; "))
	}
	get := func(k string) (string, error) {
		v, ok := s.Frontmatter.Get(k)
		if !ok {
			return "", fmt.Errorf("%s: Missing required field in frontmatter: %s", dir, k)
		}
		str, isStr := v.(string)
		if !isStr || strings.TrimSpace(str) == "" {
			return "", fmt.Errorf("%s: Field '%s' must be a non-empty string", dir, k)
		}
		return strings.TrimSpace(str), nil
	}
	n, err := get("name")
	if err != nil {
		return catalog.Item{}, err
	}
	d, err := get("description")
	if err != nil {
		return catalog.Item{}, err
	}
	return catalog.Item{Name: n, Description: d, Tier: s.Tier, InvokableBy: tiers(s.InvokableBy), Source: filepath.Dir(abs),
		Category: s.Category, Version: s.Version, Location: filepath.Join(abs, name)}, nil
}

// tiers are ts as strings.
func tiers(ts []skill.AgentTier) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// Skill is what 'skillgate show' says of one skill: the registry's
// details, where an imported version came from, and who signed a
// first_party one (or why its signature does not verify now).
type Skill struct {
	*registry.Details
	Provenance *install.Provenance   `json:"provenance,omitempty"`
	Signature  *signature.Provenance `json:"signature,omitempty"`
	SigError   string                `json:"signatureError,omitempty"`
}

// ShowSkill returns everything the registry knows about the skill name
// (a name, a category/name identity, or a rejected skill's directory). A
// skill the last scan left out for its depth is not found, with the
// reason appended to registry.ErrNotFound's message.
func (a *App) ShowSkill(ctx context.Context, name string) (*Skill, error) {
	reg, closeFn, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	d, err := reg.Show(ctx, name)
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			// A skill the last scan left out for its depth says so.
			ws, werr := reg.NotScanned(ctx, name)
			if werr != nil {
				return nil, werr
			}
			if len(ws) > 0 {
				return nil, fmt.Errorf("%w\n%s", err, strings.Join(ws, "\n"))
			}
		}
		return nil, err
	}
	out := &Skill{Details: d}
	// An imported skill says where its version came from.
	if d.Entry.Trust == "imported" && d.Entry.Digest != "" {
		if svc, closeInst, err := a.OpenInstalls(ctx); err == nil {
			out.Provenance, err = svc.ProvenanceOf(ctx, d.Entry.Digest)
			closeInst()
			if err != nil {
				return nil, err
			}
		}
	}
	// A first_party skill says who signed it: its root's signed index or
	// its own signature, as a scan checks them now.
	if d.Entry.Trust == signature.TrustFirstParty && d.Entry.Valid {
		sig, err := a.rootSignature(ctx, d.Entry.Root, d.Entry.Dir)
		out.Signature = sig
		if err != nil {
			out.SigError = err.Error()
		}
	}
	return out, nil
}

// SetEnabled enables or disables the registry's skill name; the registry's
// errors are returned as they are, skillgate's own tools (trust core)
// refused with why.
func (a *App) SetEnabled(ctx context.Context, name string, enable bool) error {
	reg, closeFn, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := reg.SetEnabled(ctx, name, enable); err != nil {
		verb := "enable"
		if !enable {
			verb = "disable"
		}
		if errors.Is(err, registry.ErrNotFound) && capability.IsReservedName(name) {
			err = fmt.Errorf("%s is one of skillgate's own tools (trust core): always on, it cannot be %sd (see docs/trust.md)", name, verb)
		}
		return err
	}
	return nil
}

// EnableImported enables or disables an imported skill when name is one;
// ok is false when no install has that name (the registry's skills then).
// Errors are the install service's.
func (a *App) EnableImported(ctx context.Context, name string, enable bool) (r *install.Review, ok bool, err error) {
	svc, closeFn, err := a.OpenInstalls(ctx)
	if err != nil {
		return nil, false, err
	}
	defer closeFn()
	// Whether name is an install at all: several versions of it are (and
	// enable or disable then picks among those it can act on).
	if _, err := svc.Review(ctx, name); errors.Is(err, install.ErrNotFound) {
		return nil, false, nil
	} else if err != nil && !errors.Is(err, install.ErrAmbiguous) {
		return nil, true, err
	}
	act := svc.Disable
	if enable {
		act = svc.Enable
	}
	r, err = act(ctx, name, a.Actor())
	return r, true, err
}

// MissingPathError is a path given to 'validate -r' that does not exist.
type MissingPathError struct{ Path string }

func (e *MissingPathError) Error() string { return e.Path + " does not exist" }

// SkillDirs returns the skill directories 'skillgate validate' judges for
// paths: each path itself (skill.ResolvePath: a SKILL.md names its
// directory), or with recursive every skill found under it, in
// discovery's order, within its bounds (maxDirs directories per path when
// above 0) and symlink policy. The walks' notes are written to notes. A
// path that does not exist is a *MissingPathError.
func SkillDirs(ctx context.Context, paths []string, recursive bool, maxDirs int, notes io.Writer) ([]string, error) {
	var dirs []string
	for _, a := range paths {
		if !recursive {
			dirs = append(dirs, skill.ResolvePath(a))
			continue
		}
		lim := discover.DefaultLimits
		if maxDirs > 0 {
			lim.MaxDirs = maxDirs
		}
		res, err := discover.Walk(ctx, discover.Root{Path: a}, lim)
		if err != nil {
			return nil, err
		}
		if res.Missing {
			return nil, &MissingPathError{Path: a}
		}
		discover.SortCandidates(res.Candidates)
		for _, c := range res.Candidates {
			dirs = append(dirs, filepath.Join(a, filepath.FromSlash(c.Rel)))
		}
		for _, n := range res.Notes {
			fmt.Fprintf(notes, "note: %s\n", n)
		}
	}
	return dirs, nil
}

// PromptItems returns the skills of 'skillgate prompt': those of the skill
// directories paths when there are any (an error for one that cannot be
// read), else the registry's enabled skills, only the pool of the agent
// tier invokableBy when it is set (a usage error when it is malformed).
func (a *App) PromptItems(ctx context.Context, paths []string, invokableBy string) ([]catalog.Item, error) {
	var its []catalog.Item
	for _, p := range paths {
		it, err := ReadProperties(p)
		if err != nil {
			return nil, err
		}
		its = append(its, it)
	}
	if len(paths) > 0 {
		return its, nil
	}
	q := registry.Query{}
	if invokableBy != "" {
		t, err := skill.ParseAgentTier(invokableBy)
		if err != nil {
			return nil, Usagef("--invokable-by: %v", err)
		}
		q.AgentTier = t
	}
	es, err := a.List(ctx, q)
	if err != nil {
		return nil, err
	}
	return CatalogItems(es), nil
}

// ScanSecurity runs the content scanner over path (a skill directory or
// one file) and returns its report with the severity failOn names, at
// which 'skillgate scan-security' fails. A bad severity or path is a usage
// error.
func ScanSecurity(ctx context.Context, path, failOn string) (*secscan.Report, secscan.Severity, error) {
	threshold, err := secscan.ParseSeverity(failOn)
	if err != nil {
		return nil, threshold, Usagef("--fail-on: %s", strings.TrimPrefix(err.Error(), secscan.ErrUsage.Error()+": "))
	}
	rep, err := secscan.Dir(ctx, path, secscan.Limits{})
	if errors.Is(err, secscan.ErrUsage) {
		return nil, threshold, Usagef("%s", strings.TrimPrefix(err.Error(), secscan.ErrUsage.Error()+": "))
	}
	return rep, threshold, err
}

// DriftArgs checks the arguments of 'skillgate drift': two skill folders
// that exist, else a usage error.
func DriftArgs(args []string) error {
	if len(args) != 2 {
		return Usagef("drift needs CANONICAL and MIRROR (see 'skillgate drift --help')")
	}
	for _, p := range args {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return Usagef("drift: %s does not exist; give two existing skill folders (see 'skillgate drift --help')", p)
		}
	}
	return nil
}

// PromptCatalog is a catalog for a prompt with what its budget did to it,
// as 'skillgate prompt --json' prints it.
type PromptCatalog struct {
	// Format is the catalog's format: xml or json.
	Format catalog.Format `json:"format"`
	// Skills names the skills the catalog holds, in its order.
	Skills []string `json:"skills"`
	// Report says what the budget shortened or left out.
	catalog.Report
	// Catalog is the catalog text, as printed without --json.
	Catalog string `json:"catalog"`
}

// BudgetCatalog renders items in format f within budget characters (0:
// no limit), as [catalog.Budget] does, and says which skills it kept.
func BudgetCatalog(items []catalog.Item, f catalog.Format, budget int) *PromptCatalog {
	out, rep := catalog.Budget(items, f, budget)
	kept := make([]string, 0, len(items)-len(rep.Omitted))
	for _, it := range items[:len(items)-len(rep.Omitted)] {
		kept = append(kept, it.Name)
	}
	return &PromptCatalog{Format: f, Skills: kept, Report: rep, Catalog: out}
}
