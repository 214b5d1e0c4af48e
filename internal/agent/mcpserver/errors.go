package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// errInternal is what an agent sees of a failure that is not its own
// doing; the cause goes to the operator's log.
const errInternal = "Error: internal error; the details are in the skillgate log"

// toolError is the one place where errors become what an agent reads (the
// text of a tool result with isError set). Filesystem errors carry their
// exact deepagents text; skill errors get fixed messages that never say
// whether a skill outside the principal's tier exists; anything else is
// logged with its cause and shown as errInternal. arg is the skill name or
// path the call was about.
func (c *Conn) toolError(ctx context.Context, tool, arg string, err error) error {
	var fe *vfs.Error
	switch {
	case errors.As(err, &fe):
		if errors.Is(fe.Kind, vfs.ErrIO) && fe.Err != nil && !errors.Is(fe.Err, context.Canceled) {
			c.logInternal(ctx, tool, arg, fe.Err)
		}
		return errors.New(fe.Msg)
	case errors.Is(err, session.ErrSkillNotFound):
		return fmt.Errorf("Error: Skill '%s' not found. Call skill_list to see the skills you can load.", clip(arg))
	case errors.Is(err, session.ErrSkillChanged):
		return fmt.Errorf("Error: Skill '%s' changed since it was scanned and cannot be loaded now; a human operator must scan the skills again.", clip(arg))
	case errors.Is(err, session.ErrNotLoaded):
		return fmt.Errorf("Error: Skill '%s' is not loaded.", clip(arg))
	case errors.Is(err, session.ErrAmbiguous), errors.Is(err, session.ErrMountInUse), errors.Is(err, registry.ErrBadPage):
		return errors.New("Error: " + err.Error())
	case errors.Is(err, session.ErrClosed):
		return errors.New("Error: the session is closed; reconnect to resume it")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errors.New("Error: request canceled")
	}
	c.logInternal(ctx, tool, arg, err)
	return errors.New(errInternal)
}

func (c *Conn) logInternal(ctx context.Context, tool, arg string, err error) {
	c.g.log.ErrorContext(ctx, "tool failed", "tool", tool, "arg", arg, "session", c.sess.ID(), "principal", c.sess.Principal().String(), "err", err)
}

// clip bounds an echoed argument.
func clip(s string) string {
	const max = 200
	s = strings.ToValidUTF8(s, "\uFFFD")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
