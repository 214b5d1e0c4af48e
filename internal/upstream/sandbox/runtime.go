package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// Mode says how a skill's servers run at call time.
type Mode string

// The modes.
const (
	// ModeBubblewrap confines the servers (the default, and the only
	// mode of an imported skill).
	ModeBubblewrap Mode = "bubblewrap"
	// ModeNone runs them as skillgate's own user, unconfined: only for a
	// first_party skill, and only when the operator configures it.
	ModeNone Mode = "none"
)

// ParseMode parses a configured mode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeBubblewrap, ModeNone:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode must be %s or %s, not %q", ModeBubblewrap, ModeNone, s)
}

// ErrNotAllowed means a skill is configured to run unconfined but may not:
// only a first_party skill may.
var ErrNotAllowed = errors.New("sandbox: none is allowed only for first_party skills")

// Runtime decides how the servers of approved skills run when their
// capabilities are called: every server of an imported skill, and of a
// first_party skill the operator did not set to [ModeNone], runs confined
// by [Bubblewrap] with the helper, its resource limits and a private state
// directory per skill version. The zero value is not usable; StateRoot and
// Helper are required. A Runtime is safe for concurrent use once built,
// and must not be copied after its first use.
type Runtime struct {
	// StateRoot holds the state directories: StateRoot/<skill key>/<version>.
	StateRoot string
	// Hide are directories hidden from every server (skillgate's data
	// directory); the state directory and the skill's tree, which lie in
	// it, are bound back.
	Hide []string
	// Helper is the helper command (see [Bubblewrap.Helper]).
	Helper []string
	// Limits bound every confined server; zero fields take defaults.
	Limits Limits
	// Modes are the operator's per-skill modes, by skill key; a skill not
	// listed is confined.
	Modes map[string]Mode
	// LookPath finds bwrap; nil means exec.LookPath.
	LookPath func(string) (string, error)

	sizeOnce sync.Once
	hasSize  bool // the installed bwrap bounds a tmpfs (--size)

	sessionOnce sync.Once
	needSession bool // a confined server needs a session of its own
}

// Server is one server of one approved skill version, as [Runtime] needs
// it.
type Server struct {
	// Skill is the skill's key (tenant/category/name) and Version its
	// content digest.
	Skill, Version string
	// FirstParty says the skill comes from a first_party root.
	FirstParty bool
	// Network says an approved capability of the server declares
	// dataEgress network: only then does it share the host's network.
	Network bool
	// Dir is the skill's tree, the server's working directory.
	Dir string
	// Args are the declared arguments and Env the declared environment
	// values by name (credential references unresolved): the absolute
	// paths among them are the server's grants (see [Grants]).
	Args []string
	Env  map[string]string
	// Binds are paths skillgate itself shows the server read-only, even
	// in a hidden directory: a package tree it fetched into its data
	// directory (see [Bubblewrap.Binds]). Never taken from a declaration.
	Binds []string
}

// Confiner returns the confinement of s: nil (and no error) when s may run
// unconfined, an error wrapping [ErrNotAllowed] when an imported skill is
// configured with [ModeNone], and one wrapping [ErrUnavailable] (saying
// how to install it) when bwrap is missing, and one wrapping
// [ErrHiddenGrant] when a path of s's declaration would expose a hidden
// one. It creates s's state directory (mode 0700) when needed.
func (r *Runtime) Confiner(s Server) (*Bubblewrap, error) {
	if r.Modes[s.Skill] == ModeNone {
		if !s.FirstParty {
			return nil, fmt.Errorf("%w: %s is imported (remove it from sandbox.skills in config.yaml)", ErrNotAllowed, s.Skill)
		}
		return nil, nil
	}
	look := r.LookPath
	if look == nil {
		look = exec.LookPath
	}
	bwrap, err := look("bwrap")
	if err != nil {
		return nil, fmt.Errorf("%w: bwrap not found; the servers of %s run only confined (install bubblewrap: apt-get install bubblewrap)", ErrUnavailable, s.Skill)
	}
	grants, err := Grants(Declaration{Args: s.Args, Env: s.Env, Dir: s.Dir}, r.Hide)
	if err != nil {
		return nil, fmt.Errorf("%w (server of %s)", err, s.Skill)
	}
	if grants == nil {
		grants = []capability.Grant{} // none, rather than those of the command line
	}
	state, err := r.StateDir(s.Skill, s.Version)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: state directory of %s: %w", s.Skill, err)
	}
	b := &Bubblewrap{
		Network: s.Network, Hide: r.Hide, LookPath: r.LookPath,
		State: state, Helper: r.Helper, Limits: r.Limits,
		SameSession: !r.sessionNeeded(), Grants: grants, Binds: s.Binds,
	}
	if tmp := r.Limits.WithDefaults().TmpBytes; tmp > 0 && r.bwrapHasSize(bwrap) {
		b.TmpSize = tmp
	}
	return b, nil
}

// sessionNeeded is [SessionNeeded], asked once.
func (r *Runtime) sessionNeeded() bool {
	r.sessionOnce.Do(func() { r.needSession = SessionNeeded() })
	return r.needSession
}

// bwrapHasSize reports whether bwrap accepts --size (bubblewrap 0.7 and
// later), asking it once.
func (r *Runtime) bwrapHasSize(bwrap string) bool {
	r.sizeOnce.Do(func() {
		out, _ := exec.Command(bwrap, "--help").CombinedOutput()
		r.hasSize = strings.Contains(string(out), "--size")
	})
	return r.hasSize
}

// StateDir returns the state directory of one skill version:
// StateRoot/<skill key>/<version>, with a version's ":" written as "-".
func (r *Runtime) StateDir(skill, version string) (string, error) {
	v := strings.ReplaceAll(version, ":", "-")
	rel := filepath.Join(skill, v)
	if skill == "" || v == "" || !filepath.IsLocal(rel) || strings.Contains(v, "/") {
		return "", fmt.Errorf("sandbox: no state directory for skill %q version %q", skill, version)
	}
	return filepath.Join(r.StateRoot, rel), nil
}
