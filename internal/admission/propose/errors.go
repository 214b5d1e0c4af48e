package propose

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps exactly one of them,
// so callers branch with [errors.Is] and never compare strings; the one
// exception is a caller's context ending, which wraps ctx.Err() instead. No
// error ever carries the API key.
var (
	// ErrInvalidConfig means an [OpenAIConfig] cannot be used: a missing base
	// URL or model, a URL that is not http(s) or carries credentials, or a
	// negative limit. The message names the setting and the fix.
	ErrInvalidConfig = errors.New("invalid LLM proposer configuration")

	// ErrInputTooLarge means the tool inventory does not fit the prompt
	// budget even with descriptions and schemas shortened. Use the
	// deterministic proposer for such a skill.
	ErrInputTooLarge = errors.New("input too large for the LLM prompt")

	// ErrRequest means the endpoint could not be reached or the connection
	// failed before a complete answer arrived.
	ErrRequest = errors.New("LLM request failed")

	// ErrTimeout means the endpoint did not answer within
	// [OpenAIConfig.Timeout].
	ErrTimeout = errors.New("LLM endpoint did not answer in time")

	// ErrStatus means the endpoint answered with an HTTP status other than
	// 200. The error is a [*StatusError] carrying the code.
	ErrStatus = errors.New("LLM endpoint returned an error status")

	// ErrResponseTooLarge means the answer was larger than
	// [OpenAIConfig.MaxResponseBytes].
	ErrResponseTooLarge = errors.New("LLM response too large")

	// ErrMalformedResponse means the answer is not a chat completion: not
	// JSON, or without a choice carrying a message.
	ErrMalformedResponse = errors.New("malformed LLM response")

	// ErrRefused means the model declined to answer (a refusal message, or a
	// content filter stopped it). The message quotes the bounded refusal.
	ErrRefused = errors.New("the model refused")

	// ErrMalformedOutput means the model's content is not a proposal of the
	// requested shape: not JSON, cut off at the token limit, a duplicate or
	// misspelt required key, or a field of the wrong type. The message names
	// the field.
	ErrMalformedOutput = errors.New("malformed model output")
)

// StatusError is the error for an answer with an HTTP status other than 200.
// It matches [ErrStatus] with [errors.Is]; use [errors.As] to read the code
// (for example to retry on 429 or 503).
type StatusError struct {
	// StatusCode is the HTTP status code received.
	StatusCode int
	// Body is the start of the response body, with control characters and
	// any occurrence of the API key removed.
	Body string
}

// Error reports the status and the trimmed body.
func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("%v: HTTP %d", ErrStatus, e.StatusCode)
	}
	return fmt.Sprintf("%v: HTTP %d: %s", ErrStatus, e.StatusCode, e.Body)
}

// Is reports whether target is [ErrStatus].
func (e *StatusError) Is(target error) bool { return target == ErrStatus }
