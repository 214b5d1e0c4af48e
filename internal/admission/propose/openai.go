package propose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for an [OpenAIConfig] left at zero.
const (
	// DefaultTimeout bounds one proposal request: a small local model on a
	// CPU may need a minute or more for a long SKILL.md.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxResponseBytes bounds the HTTP response body. A proposal for
	// a hundred tools is a few tens of kilobytes.
	DefaultMaxResponseBytes = 1 << 20
	// maxErrorBodyBytes bounds the body quoted from an error status.
	maxErrorBodyBytes = 512
)

// Environment variables read by [ConfigFromEnv].
const (
	// EnvBaseURL names the API root, e.g. https://api.openai.com/v1.
	EnvBaseURL = "SKILLGATE_LLM_BASE_URL"
	// EnvModel names the model.
	EnvModel = "SKILLGATE_LLM_MODEL"
	// EnvAPIKey holds the optional bearer key.
	EnvAPIKey = "SKILLGATE_LLM_API_KEY"
)

// OpenAIConfig configures an [OpenAI] proposer.
type OpenAIConfig struct {
	// BaseURL is the API root that chat/completions is appended to, e.g.
	// https://api.openai.com/v1 or http://127.0.0.1:11434/v1 (Ollama).
	BaseURL string
	// Model is the model name sent with each request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>". It never
	// appears in an error, in String or in a log record.
	APIKey string
	// HTTPClient sends the requests; nil means a new client with no
	// timeout of its own (Timeout applies).
	HTTPClient *http.Client
	// Timeout bounds each request, answer included; zero means
	// [DefaultTimeout].
	Timeout time.Duration
	// MaxResponseBytes bounds the answer's body; zero means
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int64
}

// ConfigFromEnv reads an LLM endpoint from SKILLGATE_LLM_BASE_URL,
// SKILLGATE_LLM_MODEL and SKILLGATE_LLM_API_KEY through getenv (os.Getenv,
// or a map lookup in tests). ok is false when the base URL or the model is
// unset, meaning: use the deterministic proposer. The values are not
// checked here; [NewOpenAI] does that.
func ConfigFromEnv(getenv func(string) string) (OpenAIConfig, bool) {
	cfg := OpenAIConfig{
		BaseURL: strings.TrimSpace(getenv(EnvBaseURL)),
		Model:   strings.TrimSpace(getenv(EnvModel)),
		APIKey:  strings.TrimSpace(getenv(EnvAPIKey)),
	}
	return cfg, cfg.BaseURL != "" && cfg.Model != ""
}

// String describes the configuration with the API key redacted, so that
// printing a config never leaks it.
func (c OpenAIConfig) String() string {
	return fmt.Sprintf("OpenAIConfig{BaseURL: %q, Model: %q, APIKey: %s, Timeout: %v, MaxResponseBytes: %d}",
		c.BaseURL, c.Model, redacted(c.APIKey), c.Timeout, c.MaxResponseBytes)
}

// GoString is String, so that %#v redacts the key too.
func (c OpenAIConfig) GoString() string { return c.String() }

// LogValue implements [slog.LogValuer] with the API key redacted.
func (c OpenAIConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.String("api_key", redacted(c.APIKey)),
		slog.Duration("timeout", c.Timeout),
		slog.Int64("max_response_bytes", c.MaxResponseBytes),
	)
}

// redacted says whether a key is set without showing it.
func redacted(key string) string {
	if key == "" {
		return "unset"
	}
	return "[redacted]"
}

// OpenAI proposes with a model behind an OpenAI-compatible chat completions
// endpoint, asking for structured output (response_format json_schema,
// strict). It is safe for concurrent use.
type OpenAI struct {
	endpoint string
	shown    string // endpoint without its query, for messages
	model    string
	apiKey   string
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
}

var _ Proposer = (*OpenAI)(nil)

// NewOpenAI checks cfg and returns a proposer. Errors wrap
// [ErrInvalidConfig]: the base URL must be an absolute http or https URL
// without user credentials, the model must be set, and the limits must not
// be negative.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("%w: base URL is empty; set %s, e.g. https://api.openai.com/v1", ErrInvalidConfig, EnvBaseURL)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL %q is not an absolute http or https URL; use e.g. http://127.0.0.1:11434/v1", ErrInvalidConfig, cfg.BaseURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: base URL must not carry credentials; put the key in %s", ErrInvalidConfig, EnvAPIKey)
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%w: base URL %q has a fragment; remove the part after #", ErrInvalidConfig, cfg.BaseURL)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("%w: model is empty; set %s, e.g. gpt-4o-mini", ErrInvalidConfig, EnvModel)
	}
	if cfg.Timeout < 0 || cfg.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("%w: timeout and response size limit must not be negative", ErrInvalidConfig)
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n") {
		return nil, fmt.Errorf("%w: API key contains a line break; check %s", ErrInvalidConfig, EnvAPIKey)
	}
	ep := u.JoinPath("chat", "completions")
	shown := *ep
	shown.RawQuery = ""
	o := &OpenAI{
		endpoint: ep.String(),
		shown:    shown.String(),
		model:    strings.TrimSpace(cfg.Model),
		apiKey:   cfg.APIKey,
		client:   cfg.HTTPClient,
		timeout:  cfg.Timeout,
		maxBytes: cfg.MaxResponseBytes,
	}
	if o.client == nil {
		o.client = &http.Client{}
	}
	if o.timeout == 0 {
		o.timeout = DefaultTimeout
	}
	if o.maxBytes == 0 {
		o.maxBytes = DefaultMaxResponseBytes
	}
	return o, nil
}

// Name returns the proposer name its proposals carry: "llm:<model>".
func (o *OpenAI) Name() string { return ProposerLLMPrefix + o.model }

// chatRequest is the body of a chat completions request.
type chatRequest struct {
	Model          string         `json:"model"`
	Messages       []chatMessage  `json:"messages"`
	ResponseFormat responseFormat `json:"response_format"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string         `json:"name"`
	Strict bool           `json:"strict"`
	Schema map[string]any `json:"schema"`
}

// chatResponse is the part of a chat completion this package reads.
type chatResponse struct {
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// SchemaName is the name of the response schema sent to the endpoint.
const SchemaName = "skill_manifest_proposal"

// Propose implements [Proposer]: one chat completions request with the
// SKILL.md and the tool inventory, answered with a structured proposal. The
// draft's Raw is the model's content as received (code fence removed). It
// is not validated: pass it to [Validate].
//
// Errors wrap [ErrInputTooLarge], [ErrRequest], [ErrTimeout], [ErrStatus]
// (a [*StatusError]), [ErrResponseTooLarge], [ErrMalformedResponse],
// [ErrRefused] or [ErrMalformedOutput]; when ctx ends first, the error wraps
// ctx.Err().
func (o *OpenAI) Propose(ctx context.Context, in Input) (*Proposal, error) {
	tools := inventory(in.Tools)
	user, err := userPrompt(in, tools)
	if err != nil {
		return nil, err
	}
	content, finish, err := o.complete(ctx, systemPrompt, user, SchemaName, responseSchema(tools))
	if err != nil {
		return nil, err
	}
	p, err := parseOutput([]byte(content))
	if err != nil {
		return nil, outputErr(err, finish)
	}
	p.Proposer = o.Name()
	return p, nil
}

// Complete asks the model one question (system and user messages) for an
// answer in the JSON Schema schema (strict structured output, named
// schemaName), and returns the answer's JSON, a code fence removed and
// checked to be one JSON value; what it means is the caller's to check.
// It is how other drafts than manifests (promote_provider mappings) use
// the configured model. Errors are Propose's.
func (o *OpenAI) Complete(ctx context.Context, system, user, schemaName string, schema map[string]any) ([]byte, error) {
	content, finish, err := o.complete(ctx, system, user, schemaName, schema)
	if err != nil {
		return nil, err
	}
	data := stripFence(bytes.TrimSpace([]byte(content)))
	if err := checkJSON(data); err != nil {
		return nil, outputErr(fmt.Errorf("%w: %w", ErrMalformedOutput, err), finish)
	}
	return data, nil
}

// outputErr explains an answer that could not be read by how it ended.
func outputErr(err error, finish string) error {
	switch finish {
	case "length":
		return fmt.Errorf("%w (the answer was cut off at the model's token limit: finish_reason length; use a model with a larger output limit, or the deterministic proposer)", err)
	case "content_filter":
		return fmt.Errorf("%w: the endpoint's content filter stopped the answer", ErrRefused)
	}
	return fmt.Errorf("%w (check that the endpoint supports response_format json_schema)", err)
}

// complete sends one chat completions request and returns the answer's
// content and finish reason.
func (o *OpenAI) complete(ctx context.Context, system, user, schemaName string, schema map[string]any) (string, string, error) {
	body, err := marshalJSON(chatRequest{
		Model: o.model,
		Messages: []chatMessage{
			{Role: "system", Content: system},
			{Role: "user", Content: user},
		},
		ResponseFormat: responseFormat{
			Type:       "json_schema",
			JSONSchema: jsonSchema{Name: schemaName, Strict: true, Schema: schema},
		},
	})
	if err != nil {
		return "", "", fmt.Errorf("%w: encoding the request: %w", ErrInputTooLarge, err)
	}

	rctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	data, err := o.post(rctx, body)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", fmt.Errorf("LLM proposer: %w", ctx.Err())
		}
		if errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return "", "", fmt.Errorf("%w: no complete answer from %s within %v", ErrTimeout, o.shown, o.timeout)
		}
		return "", "", err
	}

	var resp chatResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return "", "", fmt.Errorf("%w: %s: body is not a chat completion: %s", ErrMalformedResponse, o.shown, o.scrub(cleanText(err.Error(), maxErrorBodyBytes)))
	}
	if len(resp.Choices) == 0 || resp.Choices[0].Message == nil {
		return "", "", fmt.Errorf("%w: %s: no choices[0].message in the answer", ErrMalformedResponse, o.shown)
	}
	choice := resp.Choices[0]
	if r := choice.Message.Refusal; r != nil && strings.TrimSpace(*r) != "" {
		return "", "", fmt.Errorf("%w: %s", ErrRefused, o.scrub(cleanText(*r, maxErrorBodyBytes)))
	}
	content := ""
	if choice.Message.Content != nil {
		content = *choice.Message.Content
	}
	if strings.TrimSpace(content) == "" {
		if choice.FinishReason == "content_filter" {
			return "", "", fmt.Errorf("%w: the endpoint's content filter stopped the answer", ErrRefused)
		}
		return "", "", fmt.Errorf("%w: empty content (finish_reason %q)", ErrMalformedOutput, choice.FinishReason)
	}
	return content, choice.FinishReason, nil
}

// post sends one request and returns the body of a 200 answer, bounded.
func (o *OpenAI) post(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRequest, o.shown, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrRequest, o.scrub(err.Error()))
	}
	defer resp.Body.Close()

	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes+1))
		text := string(b)
		if len(b) > maxErrorBodyBytes {
			text = truncateUTF8(text, maxErrorBodyBytes) + "…"
		}
		return nil, &StatusError{StatusCode: resp.StatusCode, Body: o.scrub(cleanText(text, maxErrorBodyBytes+len("…")))}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, o.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the answer from %s: %s", ErrRequest, o.shown, o.scrub(err.Error()))
	}
	if int64(len(data)) > o.maxBytes {
		return nil, fmt.Errorf("%w: %s sent more than %d bytes; raise the limit (MaxResponseBytes) or check the endpoint", ErrResponseTooLarge, o.shown, o.maxBytes)
	}
	return data, nil
}

// scrub removes the API key from text that came from elsewhere (an error
// body may echo a rejected key), and the endpoint's query string.
func (o *OpenAI) scrub(s string) string {
	s = strings.ReplaceAll(s, o.endpoint, o.shown)
	if len(o.apiKey) >= 4 {
		s = strings.ReplaceAll(s, o.apiKey, "[redacted]")
	}
	return s
}
