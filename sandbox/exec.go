package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
)

// HelperCommand is the hidden skillgate subcommand that runs inside the
// sandbox: `skillgate sandbox-exec --policy JSON -- PROGRAM ARGS...`. It
// applies the policy's limits and Landlock ruleset to itself, then
// replaces itself with the program (execve), which inherits both.
const HelperCommand = "sandbox-exec"

// ErrHelperUsage means the helper was run with arguments it does not
// accept: it is skillgate's own plumbing, not a command for people.
var ErrHelperUsage = errors.New("usage: skillgate sandbox-exec --policy JSON -- PROGRAM [ARGS...]")

// Policy is what the helper enforces on itself before it runs the server.
// Bubblewrap writes it; the paths are those seen inside the sandbox (the
// same as outside: everything is bound at its own path).
type Policy struct {
	// Limits are the resource limits, already with defaults applied
	// (0 means no bound).
	Limits Limits `json:"limits"`
	// Read are the file hierarchies the server may read and execute.
	Read []string `json:"read"`
	// Write are the file hierarchies it may also write.
	Write []string `json:"write"`
	// Network says the server may use the network; without it Landlock
	// also denies TCP connect and bind (the server has no network
	// namespace of the host's anyway).
	Network bool `json:"network,omitempty"`
}

// helperArgs returns the arguments that follow the helper's command: the
// policy and the program to run.
func helperArgs(p Policy, program string, args []string) []string {
	b, _ := json.Marshal(p) // plain data: cannot fail
	out := []string{"--policy", string(b), "--", program}
	return append(out, args...)
}

// parseHelperArgs is the inverse of helperArgs.
func parseHelperArgs(args []string) (Policy, []string, error) {
	var p Policy
	if len(args) < 4 || args[0] != "--policy" || args[2] != "--" {
		return p, nil, ErrHelperUsage
	}
	if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
		return p, nil, fmt.Errorf("%w: policy: %w", ErrHelperUsage, err)
	}
	return p, args[3:], nil
}

// Exec is the helper's body (see [HelperCommand]): args are what follows
// the subcommand. It applies the limits and the Landlock ruleset (best
// effort: a kernel without Landlock, or with an older version of it,
// enforces what it can), then executes the program with env. It returns
// only on failure; on systems other than Linux it always fails.
func Exec(args, env []string) error {
	p, argv, err := parseHelperArgs(args)
	if err != nil {
		return err
	}
	return execConfined(p, argv, env)
}
