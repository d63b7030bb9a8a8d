// Package ollama adapts Ollama's native chat API (/api/chat, NDJSON
// streaming) to agent.Model, using the client and types of
// github.com/ollama/ollama/api.
//
// Every request sets options.num_ctx (Ollama's default context is small)
// and truncate false (a prompt longer than num_ctx is an error, never cut
// in silence), streams, and sends think and keep_alive when configured.
//
// Usage: prompt_eval_count and eval_count are the server's prompt and
// completion counts (CountServer). Ollama's eval_count includes thinking
// tokens, so CompletionTokens includes reasoning, as with the OpenAI adapter;
// ReasoningTokens is estimated from the thinking text (len/4, CountEstimate)
// because Ollama does not report it. A count Ollama leaves out (it omits zero
// values) is estimated from the text instead.
//
// The api client does not expose response headers, drops the status of an
// error response with an empty body, and cannot tell a body cut mid-line from
// an error line, so the HTTP client is wrapped with a small RoundTripper that
// records status, headers and body read errors per call (through the
// request's context); Retry-After and truncation come from there. The api
// client reads until the body ends; we stop it at the done:true line. Note that the api client
// itself reads OLLAMA_AUTH from the environment and signs requests to
// ollama.com; this package sets neither.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/ollama/ollama/api"

	"github.com/kiln-dev/kiln/agent"
)

// DefaultNumCtx is the context length sent when Config.NumCtx is 0.
const DefaultNumCtx = 8192

// Config describes one Ollama server and model.
type Config struct {
	// Name identifies the endpoint in errors and logs. Defaults to BaseURL.
	Name string
	// BaseURL is the server root, for example "http://localhost:11434"
	// (without /api or /v1). Required.
	BaseURL string
	// Model is the model tag, for example "qwen3:8b". Required.
	Model string
	// NumCtx is the context length in tokens, always sent as
	// options.num_ctx. 0 means DefaultNumCtx.
	NumCtx int
	// KeepAlive is how long Ollama keeps the model loaded after a call.
	// 0 leaves the server default (5m); negative keeps it loaded.
	KeepAlive time.Duration
	// Think is "" (model default), "true", "false", or a level "low",
	// "medium", "high" (for models such as gpt-oss).
	Think string
	// Timeout bounds each call (0: only ctx bounds it). A call that runs
	// out of it fails with agent.KindRetryable.
	Timeout time.Duration
	// HTTPClient is used for all requests; nil means a client with no
	// overall timeout. It is copied, not modified.
	HTTPClient *http.Client
}

// errDone stops the api client's read loop after the final line.
var errDone = errors.New("done")

// Client is an agent.Model for one Ollama model. It is safe for concurrent use.
type Client struct {
	name      string
	baseURL   string
	model     string
	numCtx    int
	keepAlive *api.Duration
	think     *api.ThinkValue
	timeout   time.Duration
	api       *api.Client
}

var _ agent.Model = (*Client)(nil)

// New validates cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("ollama config: BaseURL is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ollama config: BaseURL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, errors.New("ollama config: Model is required")
	}
	if cfg.NumCtx < 0 {
		return nil, fmt.Errorf("ollama config: NumCtx %d is negative", cfg.NumCtx)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("ollama config: Timeout %s is negative", cfg.Timeout)
	}
	c := &Client{
		name:    cfg.Name,
		baseURL: cfg.BaseURL,
		model:   cfg.Model,
		numCtx:  cfg.NumCtx,
		timeout: cfg.Timeout,
	}
	if c.name == "" {
		c.name = cfg.BaseURL
	}
	if c.numCtx == 0 {
		c.numCtx = DefaultNumCtx
	}
	if cfg.KeepAlive != 0 {
		c.keepAlive = &api.Duration{Duration: cfg.KeepAlive}
	}
	switch cfg.Think {
	case "":
	case "true", "false":
		c.think = &api.ThinkValue{Value: cfg.Think == "true"}
	case "low", "medium", "high":
		c.think = &api.ThinkValue{Value: cfg.Think}
	default:
		return nil, fmt.Errorf("ollama config: Think %q is not one of true, false, low, medium, high", cfg.Think)
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient
		hc = &copied
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = recorder{base: base}
	c.api = api.NewClient(u, hc)
	return c, nil
}

// Name returns the endpoint name used in errors.
func (c *Client) Name() string { return c.name }

// Chat sends one /api/chat request and reads the NDJSON stream. Failures are
// *agent.Error, except a cancelled or expired ctx, which is returned wrapped.
func (c *Client) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	creq, err := c.chatRequest(req)
	if err != nil {
		return nil, c.fail(agent.KindBadRequest, 0, 0, err)
	}
	callCtx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	rec := &recording{}
	callCtx = context.WithValue(callCtx, recordingKey{}, rec)

	var (
		start     = time.Now()
		ttft      time.Duration
		content   strings.Builder
		thinking  strings.Builder
		calls     []agent.ToolCall
		final     *api.ChatResponse
		badChunks error
	)
	err = c.api.Chat(callCtx, creq, func(r api.ChatResponse) error {
		m := r.Message
		if ttft == 0 && (m.Content != "" || m.Thinking != "" || len(m.ToolCalls) > 0) {
			ttft = time.Since(start)
		}
		content.WriteString(m.Content)
		thinking.WriteString(m.Thinking)
		for _, tc := range m.ToolCalls {
			args, err := tc.Function.Arguments.MarshalJSON()
			if err != nil {
				badChunks = fmt.Errorf("encode tool call arguments: %w", err)
				return badChunks
			}
			id := tc.ID
			if id == "" {
				id = "call_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24]
			}
			calls = append(calls, agent.ToolCall{ID: id, Name: tc.Function.Name, Arguments: args})
		}
		if r.Done {
			final = &r
			// Stop here: the api client would otherwise wait for
			// the server to end the body.
			return errDone
		}
		return nil
	})
	if errors.Is(err, errDone) {
		err = nil
	}
	latency := time.Since(start)
	status, header, readErr := rec.get()
	var se api.StatusError
	var ae api.AuthorizationError
	httpErr := errors.As(err, &se) || errors.As(err, &ae)

	switch {
	case final != nil && err == nil:
		// Complete, even if ctx ended just after the last line.
	case badChunks != nil:
		return nil, c.fail(agent.KindBadResponse, status, 0, badChunks)
	case err != nil && httpErr:
		return nil, c.classify(ctx, callCtx, status, header, err)
	case readErr != nil:
		// The body broke off. The api client reports a cut last line as
		// a plain error, or nothing at all.
		if ierr := c.interruptedCtx(ctx, callCtx, readErr); ierr != nil {
			return nil, ierr
		}
		return nil, c.fail(agent.KindTruncated, status, 0, fmt.Errorf("stream cut before done:true: %w", readErr))
	case err != nil:
		return nil, c.classify(ctx, callCtx, status, header, err)
	case status >= 400:
		// An error status with an empty body: the api client returns nil.
		return nil, c.statusError(status, header, http.StatusText(status))
	default:
		if ierr := c.interruptedCtx(ctx, callCtx, errors.New("stream interrupted")); ierr != nil {
			return nil, ierr
		}
		return nil, c.fail(agent.KindTruncated, status, 0, errors.New("stream ended without done:true"))
	}

	msg := agent.Message{
		Role:      agent.RoleAssistant,
		Content:   content.String(),
		Reasoning: thinking.String(),
		ToolCalls: calls,
	}
	return &agent.Response{
		Message:      msg,
		Usage:        c.usage(req, msg, final, latency, ttft),
		FinishReason: final.DoneReason,
		Model:        final.Model,
	}, nil
}

func (c *Client) usage(req agent.Request, msg agent.Message, final *api.ChatResponse, latency, ttft time.Duration) agent.Usage {
	// Ollama omits zero counts; fall back to estimates for what is missing.
	u := agent.EstimateUsage(req, msg)
	if final.PromptEvalCount > 0 {
		u.PromptTokens, u.PromptSource = final.PromptEvalCount, agent.CountServer
	}
	if final.EvalCount > 0 || u.CompletionTokens == 0 {
		u.CompletionTokens, u.CompletionSource = final.EvalCount, agent.CountServer
		// eval_count includes thinking: never estimate more reasoning.
		u.ReasoningTokens = min(u.ReasoningTokens, u.CompletionTokens)
	}
	if msg.Reasoning == "" {
		u.ReasoningSource = agent.CountNone
	}
	u.Latency, u.TTFT, u.Calls = latency, ttft, 1
	return u
}

// chatRequest converts req to Ollama's request type.
func (c *Client) chatRequest(req agent.Request) (*api.ChatRequest, error) {
	stream := true
	opts := map[string]any{"num_ctx": c.numCtx}
	s := req.Sampling
	if s.Temperature != nil {
		opts["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		opts["top_p"] = *s.TopP
	}
	if s.Seed != nil {
		opts["seed"] = *s.Seed
	}
	if s.MaxTokens > 0 {
		opts["num_predict"] = s.MaxTokens
	}
	noTruncate := false
	creq := &api.ChatRequest{
		Model:     c.model,
		Truncate:  &noTruncate, // an error, not a prompt silently cut to num_ctx
		Messages:  make([]api.Message, 0, len(req.Messages)),
		Stream:    &stream,
		KeepAlive: c.keepAlive,
		Options:   opts,
		Think:     c.think,
	}
	for _, m := range req.Messages {
		am := api.Message{
			Role:       string(m.Role),
			Content:    m.Content,
			Thinking:   m.Reasoning, // the model's template decides whether to use it
			ToolCallID: m.ToolCallID,
		}
		if m.Role == agent.RoleTool {
			am.ToolName = m.Name
		}
		for i, tc := range m.ToolCalls {
			args := api.NewToolCallFunctionArguments()
			if len(tc.Arguments) > 0 {
				// Arguments that are not an object (kept as the
				// model wrote them) are sent back empty.
				_ = json.Unmarshal(tc.Arguments, &args)
			}
			am.ToolCalls = append(am.ToolCalls, api.ToolCall{
				ID:       tc.ID,
				Function: api.ToolCallFunction{Index: i, Name: tc.Name, Arguments: args},
			})
		}
		creq.Messages = append(creq.Messages, am)
	}
	for _, t := range req.Tools {
		var params api.ToolFunctionParameters
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &params); err != nil {
				return nil, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
			}
		}
		if params.Type == "" {
			params.Type = "object"
		}
		if params.Properties == nil {
			params.Properties = api.NewToolPropertiesMap()
		}
		creq.Tools = append(creq.Tools, api.Tool{
			Type:     "function",
			Function: api.ToolFunction{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return creq, nil
}

// classify maps an error from the api client to an error kind.
func (c *Client) classify(ctx, callCtx context.Context, status int, h http.Header, err error) error {
	var se api.StatusError
	var ae api.AuthorizationError
	var ute *json.UnmarshalTypeError
	var se2 *json.SyntaxError
	switch {
	case errors.As(err, &ae):
		return c.fail(agent.KindAuth, ae.StatusCode, 0, err)
	case errors.As(err, &se):
		return c.statusError(se.StatusCode, h, se.ErrorMessage)
	}
	if ierr := c.interruptedCtx(ctx, callCtx, err); ierr != nil {
		return ierr
	}
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &ute), errors.As(err, &se2):
		return c.fail(agent.KindBadResponse, status, 0, fmt.Errorf("decode stream line: %w", err))
	case errors.As(err, &ue), errors.As(err, &ne):
		return c.fail(agent.KindRetryable, status, 0, err)
	}
	// The api client turns both an {"error": ...} line inside a 200 stream
	// and a line that is not JSON into a plain error.
	return c.fail(agent.KindRetryable, status, 0, fmt.Errorf("error in stream: %w", err))
}

// statusError classifies an HTTP error status and its message.
func (c *Client) statusError(status int, h http.Header, msg string) error {
	if msg == "" {
		msg = http.StatusText(status)
	}
	err := errors.New(msg)
	switch {
	case strings.Contains(msg, "exceeds the context length"):
		// Sent with truncate false: the prompt does not fit num_ctx.
		return c.fail(agent.KindBadRequest, status, 0,
			fmt.Errorf("the prompt does not fit the context of %d tokens (num_ctx) on %s: raise the model's num_ctx or shorten the prompt (%s)",
				c.numCtx, c.name, msg))
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return c.fail(agent.KindRetryable, status, agent.RetryAfter(h, time.Now()), err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return c.fail(agent.KindAuth, status, 0, err)
	case status == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "not found") &&
		strings.Contains(strings.ToLower(msg), "model"):
		return c.fail(agent.KindModelNotFound, status, 0,
			fmt.Errorf("ollama model %q is not pulled on %s: run \"ollama pull %s\" (%s)", c.model, c.baseURL, c.model, msg))
	case status == http.StatusNotFound:
		return c.fail(agent.KindBadRequest, status, 0,
			fmt.Errorf("%s/api/chat not found (is BaseURL the server root?): %w", strings.TrimRight(c.baseURL, "/"), err))
	case status >= 400:
		return c.fail(agent.KindBadRequest, status, 0, err)
	}
	return c.fail(agent.KindBadResponse, status, 0, fmt.Errorf("unexpected status: %w", err))
}

// interruptedCtx returns the error to report when a context ended the call,
// or nil when neither did.
func (c *Client) interruptedCtx(ctx, callCtx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("ollama %s: %w", c.name, ctx.Err())
	}
	if callCtx.Err() != nil {
		return c.fail(agent.KindRetryable, 0, 0, fmt.Errorf("%w after %s: %w", agent.ErrCallTimeout, c.timeout, err))
	}
	return nil
}

func (c *Client) fail(kind agent.ErrorKind, status int, retryIn time.Duration, err error) *agent.Error {
	return &agent.Error{Kind: kind, Endpoint: c.name, Model: c.model, Status: status, RetryIn: retryIn, Err: err}
}

// recorder is an http.RoundTripper that records, into the recording carried
// by its request's context, the status and headers of the response and the
// first error reading its body (the api client hides all three).
type recorder struct{ base http.RoundTripper }

type recordingKey struct{}

type recording struct {
	mu      sync.Mutex
	status  int
	header  http.Header
	readErr error
}

func (r *recording) get() (int, http.Header, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.header, r.readErr
}

func (t recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if rec, ok := req.Context().Value(recordingKey{}).(*recording); ok && resp != nil {
		rec.mu.Lock()
		rec.status, rec.header = resp.StatusCode, resp.Header
		rec.mu.Unlock()
		resp.Body = &recordingBody{ReadCloser: resp.Body, rec: rec}
	}
	return resp, err
}

type recordingBody struct {
	io.ReadCloser
	rec *recording
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.rec.mu.Lock()
		if b.rec.readErr == nil {
			b.rec.readErr = err
		}
		b.rec.mu.Unlock()
	}
	return n, err
}

// Detect asks the server behind baseURL (any path: an OpenAI-compatible
// ".../v1" URL too) for Ollama's version (GET /api/version at its root):
// the version when it is an Ollama server, an error otherwise. kiln uses it
// to warn that Ollama's OpenAI-compatible endpoint cuts a prompt longer
// than the model's context window without an error (it sets neither
// num_ctx nor truncate), where this package's Client fails loudly.
func Detect(ctx context.Context, baseURL string, hc *http.Client) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("ollama detect: %q is not an http(s) URL", baseURL)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	root := &url.URL{Scheme: u.Scheme, Host: u.Host, User: u.User}
	v, err := api.NewClient(root, hc).Version(ctx)
	if err != nil {
		return "", fmt.Errorf("ollama detect: %w", err)
	}
	if v == "" {
		return "", errors.New("ollama detect: no version in the answer")
	}
	return v, nil
}
