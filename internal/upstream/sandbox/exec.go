package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// HelperCommand is the hidden skillgate subcommand that runs inside the
// sandbox: `skillgate sandbox-exec -- PROGRAM ARGS...`, with its policy in
// the environment variable [PolicyEnv]. It applies the policy's limits and
// Landlock ruleset to itself, then replaces itself with the program
// (execve), which inherits both but not the variable.
const HelperCommand = "sandbox-exec"

// PolicyEnv is the environment variable that carries the helper's
// [Policy] (JSON). bwrap sets it in the helper's environment only (its
// option arrives through a file descriptor, not a command line), and the
// helper removes it before it executes the server: the policy names host
// paths, and no command line or environment the server can read holds it.
const PolicyEnv = "SKILLGATE_SANDBOX_POLICY"

// ErrHelperUsage means the helper was run with arguments it does not
// accept: it is skillgate's own plumbing, not a command for people.
var ErrHelperUsage = errors.New("usage: " + PolicyEnv + "=JSON skillgate sandbox-exec -- PROGRAM [ARGS...]")

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

// encode returns p as the value of [PolicyEnv].
func (p Policy) encode() string {
	b, _ := json.Marshal(p) // plain data: cannot fail
	return string(b)
}

// parseHelper reads the helper's policy from env and its command from
// args ("--", PROGRAM, ARGS), and returns env without [PolicyEnv].
func parseHelper(args, env []string) (Policy, []string, []string, error) {
	var p Policy
	if len(args) < 2 || args[0] != "--" {
		return p, nil, nil, ErrHelperUsage
	}
	var raw string
	found := false
	rest := make([]string, 0, len(env))
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, PolicyEnv+"="); ok {
			raw, found = v, true
			continue
		}
		rest = append(rest, kv)
	}
	if !found {
		return p, nil, nil, fmt.Errorf("%w: %s is not set", ErrHelperUsage, PolicyEnv)
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return p, nil, nil, fmt.Errorf("%w: %s: %w", ErrHelperUsage, PolicyEnv, err)
	}
	return p, args[1:], rest, nil
}

// Exec is the helper's body (see [HelperCommand]): args are what follows
// the subcommand and env its environment. It applies the limits and the
// Landlock ruleset (best effort: a kernel without Landlock, or with an
// older version of it, enforces what it can), then executes the program
// with env less [PolicyEnv], and with no file descriptor but 0, 1 and 2.
// It returns only on failure; on systems other than Linux it always
// fails.
func Exec(args, env []string) error {
	p, argv, env, err := parseHelper(args, env)
	if err != nil {
		return err
	}
	return execConfined(p, argv, env)
}
