package mcpclient

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// minSecretLen is the shortest credential value scrubbed from text: a
// shorter one would match ordinary words and digits everywhere.
const minSecretLen = 4

// scrubber removes a server's credential values from text captured from
// that server (its stderr, error messages, tool lists kept in reports), so
// that a server echoing its token cannot get it stored, logged or printed.
// Each value becomes "[redacted:NAME]". The zero scrubber changes nothing.
type scrubber struct {
	r *strings.Replacer
}

// newScrubber returns the scrubber of the credentials names, looked up with
// lookup. Values are matched as they are and as they appear inside a JSON
// string.
func newScrubber(names []string, lookup CredentialLookup) scrubber {
	if lookup == nil || len(names) == 0 {
		return scrubber{}
	}
	type pair struct{ old, new string }
	var pairs []pair
	for _, n := range names {
		v, ok := lookup(n)
		if !ok || len(v) < minSecretLen {
			continue
		}
		mark := "[redacted:" + n + "]"
		pairs = append(pairs, pair{v, mark})
		if b, err := json.Marshal(v); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != v {
				pairs = append(pairs, pair{esc, mark})
			}
		}
	}
	if len(pairs) == 0 {
		return scrubber{}
	}
	// Longer values first, so that a value containing another is replaced
	// whole.
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i].old) > len(pairs[j].old) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return scrubber{r: strings.NewReplacer(args...)}
}

// err returns err with its message scrubbed; errors.Is and errors.As still
// see the sentinel and the *ServerError.
func (s scrubber) err(err error) error {
	if s.r == nil || err == nil {
		return err
	}
	msg := err.Error()
	clean := s.r.Replace(msg)
	if clean == msg {
		return err
	}
	// What an exited server wrote to stderr is scrubbed too, for a reader
	// of the *ExitError in the chain.
	var exit *ExitError
	if errors.As(err, &exit) {
		cp := *exit
		cp.Stderr = s.r.Replace(exit.Stderr)
		exit = &cp
	}
	var se *ServerError
	if errors.As(err, &se) && se == err {
		inner := se.Err.Error()
		return &ServerError{ServerID: se.ServerID, Phase: se.Phase, Err: &scrubbedError{msg: s.r.Replace(inner), err: se.Err, exit: exit}}
	}
	return &scrubbedError{msg: clean, err: err, exit: exit}
}

// report scrubs every text of r, pins included: a pinned definition that
// held a credential value is pinned again as scrubbed, so the digest
// matches what is stored (the pin verifies) and the live tool, scrubbed
// the same way at every re-check, compares equal. A rotated credential
// echoed in a definition is therefore not drift.
func (s scrubber) report(r *ServerReport) (*ServerReport, error) {
	if s.r == nil || r == nil {
		return r, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	clean := s.r.Replace(string(b))
	if clean == string(b) {
		return r, nil
	}
	var out ServerReport
	if err := json.Unmarshal([]byte(clean), &out); err != nil {
		return nil, err
	}
	digests := make(map[string]string) // old digest → new
	for i, p := range out.Pins.Tools {
		if string(p.Definition) == string(r.Pins.Tools[i].Definition) && out.Pins.Server == r.Pins.Server {
			out.Pins.Tools[i] = r.Pins.Tools[i]
			continue
		}
		np, err := capability.NewToolPin(out.Pins.Server, p.Definition)
		if err != nil {
			return nil, err
		}
		digests[r.Pins.Tools[i].Digest] = np.Digest
		out.Pins.Tools[i] = np
	}
	for i, c := range out.Capabilities {
		if d, ok := digests[c.Pin]; ok {
			out.Capabilities[i].Pin = d
		}
	}
	sort.Slice(out.Pins.Tools, func(i, j int) bool { return out.Pins.Tools[i].Name < out.Pins.Tools[j].Name })
	return &out, nil
}

// scrubbedError is an error whose message was scrubbed.
type scrubbedError struct {
	msg string
	err error
	// exit is the scrubbed copy of the *ExitError in err's chain, if any:
	// errors.As finds it, never the original.
	exit *ExitError
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// As gives the scrubbed *ExitError to errors.As.
func (e *scrubbedError) As(target any) bool {
	if t, ok := target.(**ExitError); ok && e.exit != nil {
		*t = e.exit
		return true
	}
	return false
}
