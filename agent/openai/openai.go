// Package openai adapts OpenAI-compatible chat-completion servers (vLLM,
// llama.cpp server, OpenAI itself) to agent.Model.
//
// Requests are built from the github.com/sashabaranov/go-openai request types
// (ChatCompletionRequest, ChatCompletionMessage, Tool, ToolCall) and marshalled
// with go-openai's own JSON encoding. The HTTP exchange and the reading of the
// answer are done here, for three reasons go-openai cannot cover:
//
//   - vLLM now sends reasoning text in "reasoning" (older servers and
//     llama.cpp in "reasoning_content"); go-openai decodes only
//     "reasoning_content". We decode both from the raw JSON.
//   - go-openai's float32 `temperature,omitempty` drops temperature 0 (greedy
//     decoding) and has no extra-body field for chat; we patch the marshalled
//     body so that a set temperature or top_p is always sent and ExtraBody is
//     merged in.
//   - go-openai's stream reader returns io.EOF both after "data: [DONE]" and
//     when the connection closes early, and its errors carry no headers
//     (Retry-After). Reading the SSE stream here lets us tell a complete
//     stream from a truncated one and classify errors precisely.
//
// Error bodies are decoded with go-openai's ErrorResponse/APIError types.
//
// Completeness: a streamed answer is whole when "data: [DONE]" arrives, or
// when the stream ends (even with a read error) after a finish_reason; then
// only the usage chunk may be missing and usage is estimated. A stream that
// ends any other way is agent.KindTruncated and its partial text is dropped,
// except a whole body with no data: line and lines that are not SSE at all
// (an HTML page from a proxy, sent with status 200): agent.KindBadResponse.
//
// Usage: prompt and completion tokens come from the server's usage object
// (CountServer; streaming requests ask for it with
// stream_options.include_usage). CompletionTokens includes reasoning tokens,
// as OpenAI and vLLM count them. ReasoningTokens comes from
// usage.completion_tokens_details.reasoning_tokens when the server sends a
// number (CountServer); otherwise, when reasoning text was received, it is
// estimated as len/4 (CountEstimate). When the server sends no usage at all,
// prompt and completion are estimated from the text (CountEstimate).
//
// Reasoning text of earlier assistant turns is not sent back: there is no
// standard request field for it and OpenAI rejects unknown ones.
package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	goopenai "github.com/sashabaranov/go-openai"

	"github.com/kiln-dev/kiln/agent"
)

// Limits on what is read from a server.
const (
	maxLineBytes  = 8 << 20  // one SSE line
	maxBodyBytes  = 64 << 20 // one non-streamed response
	maxErrorBytes = 64 << 10 // an error body
)

// Config describes one OpenAI-compatible endpoint.
type Config struct {
	// Name identifies the endpoint in errors and logs. Defaults to BaseURL.
	Name string
	// BaseURL is the API root, including the version path, for example
	// "http://gpu1:8000/v1" or "https://api.openai.com/v1". Required.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when set.
	APIKey string
	// Model is the served model name. Required.
	Model string
	// Timeout bounds each call (0: only ctx bounds it). A call that runs
	// out of it fails with agent.KindRetryable.
	Timeout time.Duration
	// ExtraBody is merged into the top level of every request body, for
	// server-specific parameters (vLLM "top_k", "chat_template_kwargs", ...).
	// It may override sampling fields but not "model", "messages" or "stream".
	ExtraBody map[string]any
	// Headers are added to every request.
	Headers map[string]string
	// Stream selects streamed (SSE) responses; nil means true. Only a
	// streamed call measures TTFT.
	Stream *bool
	// HTTPClient is used for all requests; nil means a client with no
	// overall timeout (the stream may legitimately take minutes).
	HTTPClient *http.Client
}

// Client is an agent.Model for one OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	name      string
	baseURL   string
	url       string
	apiKey    string
	model     string
	timeout   time.Duration
	stream    bool
	extraBody map[string]json.RawMessage
	headers   http.Header
	hc        *http.Client
}

var _ agent.Model = (*Client)(nil)

// New validates cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("openai config: BaseURL is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai config: BaseURL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, errors.New("openai config: Model is required")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("openai config: Timeout %s is negative", cfg.Timeout)
	}
	c := &Client{
		name:    cfg.Name,
		baseURL: cfg.BaseURL,
		url:     strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		apiKey:  cfg.APIKey,
		model:   cfg.Model,
		timeout: cfg.Timeout,
		stream:  cfg.Stream == nil || *cfg.Stream,
		headers: make(http.Header),
		hc:      cfg.HTTPClient,
	}
	if c.name == "" {
		c.name = cfg.BaseURL
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if len(cfg.ExtraBody) > 0 {
		c.extraBody = make(map[string]json.RawMessage, len(cfg.ExtraBody))
		for k, v := range cfg.ExtraBody {
			switch k {
			case "model", "messages", "stream":
				return nil, fmt.Errorf("openai config: ExtraBody may not set %q", k)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("openai config: ExtraBody[%q]: %w", k, err)
			}
			c.extraBody[k] = b
		}
	}
	for k, v := range cfg.Headers {
		if k == "" {
			return nil, errors.New("openai config: Headers has an empty name")
		}
		c.headers.Set(k, v)
	}
	return c, nil
}

// Name returns the endpoint name used in errors.
func (c *Client) Name() string { return c.name }

// Chat sends one chat-completion request. Failures are *agent.Error, except a
// cancelled or expired ctx, which is returned wrapped as is.
func (c *Client) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	body, err := c.requestBody(req)
	if err != nil {
		return nil, c.fail(agent.KindBadRequest, 0, 0, err)
	}
	callCtx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(callCtx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, c.fail(agent.KindBadRequest, 0, 0, err)
	}
	hreq.Header = c.headers.Clone()
	hreq.Header.Set("Content-Type", "application/json")
	if c.stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}

	start := time.Now()
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, c.interrupted(ctx, callCtx, err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK {
		return nil, c.statusError(ctx, callCtx, hresp)
	}

	acc := newAccumulator(start)
	// A server that ignores "stream" answers with one JSON body.
	ct := hresp.Header.Get("Content-Type")
	if c.stream && !strings.HasPrefix(ct, "application/json") {
		err = c.readStream(ctx, callCtx, hresp.Body, acc)
	} else {
		err = c.readBody(ctx, callCtx, hresp.Body, acc)
	}
	if err != nil {
		return nil, err
	}
	return acc.response(req, time.Since(start)), nil
}

// requestBody builds the JSON body from go-openai's request types, then sets
// the fields go-openai would drop or cannot express.
func (c *Client) requestBody(req agent.Request) ([]byte, error) {
	oreq := goopenai.ChatCompletionRequest{
		Model:     c.model,
		Messages:  make([]goopenai.ChatCompletionMessage, 0, len(req.Messages)),
		MaxTokens: req.Sampling.MaxTokens,
		Seed:      req.Sampling.Seed,
		Stream:    c.stream,
	}
	if c.stream {
		oreq.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	for _, m := range req.Messages {
		om := goopenai.ChatCompletionMessage{
			Role:       string(m.Role),
			Content:    m.Content,
			Name:       m.Name,
			ToolCallID: m.ToolCallID,
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, goopenai.ToolCall{
				ID:   tc.ID,
				Type: goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{
					Name:      tc.Name,
					Arguments: argumentsText(tc.Arguments),
				},
			})
		}
		oreq.Messages = append(oreq.Messages, om)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(params) {
			return nil, fmt.Errorf("tool %q: parameters are not valid JSON", t.Name)
		}
		oreq.Tools = append(oreq.Tools, goopenai.Tool{
			Type: goopenai.ToolTypeFunction,
			Function: &goopenai.FunctionDefinition{
				Name:        t.Name,
				Description: t.Description,
				Parameters:  params,
			},
		})
	}
	b, err := json.Marshal(oreq)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	// go-openai's Temperature and TopP are float32 with omitempty: 0 would
	// vanish and 0.7 would be rounded to float32. Send our float64s.
	if t := req.Sampling.Temperature; t != nil {
		m["temperature"], _ = json.Marshal(*t)
	}
	if p := req.Sampling.TopP; p != nil {
		m["top_p"], _ = json.Marshal(*p)
	}
	for k, v := range c.extraBody {
		m[k] = v
	}
	return json.Marshal(m)
}

// argumentsText turns stored arguments back into the string OpenAI expects.
// Arguments that were not valid JSON are stored as a JSON string (see
// finishArguments); they are sent back as the text the model wrote.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// Wire types of the answer. go-openai's types lack "reasoning" and cannot
// tell a null reasoning_tokens from 0.

type wireChunk struct {
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// Error is set when the server reports an error inside a 200 stream.
	Error json.RawMessage `json:"error"`
	// Object is "error" in older vLLM in-stream errors, which are not
	// wrapped in "error".
	Object string `json:"object"`
}

func (ch *wireChunk) isError() bool {
	return (len(ch.Error) > 0 && string(ch.Error) != "null") || ch.Object == "error"
}

type wireChoice struct {
	Index        int         `json:"index"`
	Delta        wireMessage `json:"delta"`
	Message      wireMessage `json:"message"`
	FinishReason *string     `json:"finish_reason"`
}

type wireMessage struct {
	Content          string              `json:"content"`
	Reasoning        string              `json:"reasoning"`
	ReasoningContent string              `json:"reasoning_content"`
	ToolCalls        []goopenai.ToolCall `json:"tool_calls"`
}

type wireUsage struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// readStream reads an SSE stream into acc. It returns nil only when the
// stream ended with [DONE] or, failing that, after a finish_reason.
func (c *Client) readStream(ctx, callCtx context.Context, body io.Reader, acc *accumulator) error {
	br := bufio.NewReaderSize(body, 64<<10)
	var (
		data    []byte
		hasData bool
		readErr error
		// sawData and foreign tell a cut event stream from a body that
		// never was one (a proxy's HTML page sent with status 200).
		sawData, foreign bool
	)
	for {
		line, err := readLine(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
				break
			}
			// A complete event without the closing blank line is
			// still complete.
			if !hasData {
				break
			}
			line = nil
		}
		if len(line) == 0 {
			if hasData {
				done, perr := c.dispatch(data, acc)
				if perr != nil {
					return perr
				}
				if done {
					if !acc.sawChoice {
						return c.fail(agent.KindBadResponse, http.StatusOK, 0, errors.New("stream had no choices"))
					}
					return nil
				}
				data, hasData = data[:0], false
			}
			if err != nil {
				break
			}
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. keep-alive ": ping"
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			switch string(field) {
			case "event", "id", "retry":
			default:
				foreign = true
			}
			continue // event:, id:, retry:
		}
		sawData = true
		value = bytes.TrimPrefix(value, []byte(" "))
		if hasData {
			data = append(data, '\n')
		}
		data = append(data, value...)
		hasData = true
	}
	if errors.Is(readErr, errLineTooLong) {
		return c.fail(agent.KindBadResponse, http.StatusOK, 0, readErr)
	}
	if acc.finish != "" {
		// The answer is whole; only [DONE] (and maybe usage) is missing.
		return nil
	}
	if !sawData && foreign && readErr == nil {
		return c.fail(agent.KindBadResponse, http.StatusOK, 0, errors.New("response is not an event stream (no data: lines)"))
	}
	if readErr != nil {
		if ierr := c.interruptedCtx(ctx, callCtx, readErr); ierr != nil {
			return ierr
		}
		return c.fail(agent.KindTruncated, http.StatusOK, 0, fmt.Errorf("stream cut before [DONE]: %w", readErr))
	}
	if ierr := c.interruptedCtx(ctx, callCtx, io.EOF); ierr != nil {
		return ierr
	}
	return c.fail(agent.KindTruncated, http.StatusOK, 0, errors.New("stream ended without [DONE] or finish_reason"))
}

var errLineTooLong = fmt.Errorf("SSE line longer than %d bytes", maxLineBytes)

// readLine returns the next line without its terminator. A last line with no
// terminator means the stream was cut mid-event: io.ErrUnexpectedEOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxLineBytes {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			line = line[:len(line)-1]
			return bytes.TrimSuffix(line, []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// dispatch handles one SSE event's data. done reports [DONE].
func (c *Client) dispatch(data []byte, acc *accumulator) (done bool, err error) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return true, nil
	}
	var ch wireChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return false, c.fail(agent.KindBadResponse, http.StatusOK, 0,
			fmt.Errorf("decode stream chunk %q: %w", clip(data, 200), err))
	}
	if ch.isError() {
		return false, c.streamError(data)
	}
	acc.add(ch, true)
	return false, nil
}

// streamError classifies an error event inside a 200 stream: by its numeric
// code when it has one, else as retryable (the engine failed mid-answer).
func (c *Client) streamError(data []byte) error {
	msg, code := errorDetails(data)
	err := fmt.Errorf("error in stream: %s", msg)
	if code >= 400 && code < 600 {
		return c.classify(code, nil, data, err)
	}
	return c.fail(agent.KindRetryable, http.StatusOK, 0, err)
}

// readBody reads a non-streamed response into acc.
func (c *Client) readBody(ctx, callCtx context.Context, body io.Reader, acc *accumulator) error {
	b, err := io.ReadAll(io.LimitReader(body, maxBodyBytes+1))
	if err != nil {
		if ierr := c.interruptedCtx(ctx, callCtx, err); ierr != nil {
			return ierr
		}
		return c.fail(agent.KindTruncated, http.StatusOK, 0, fmt.Errorf("read response: %w", err))
	}
	if len(b) > maxBodyBytes {
		return c.fail(agent.KindBadResponse, http.StatusOK, 0, fmt.Errorf("response larger than %d bytes", maxBodyBytes))
	}
	var ch wireChunk
	if err := json.Unmarshal(b, &ch); err != nil {
		return c.fail(agent.KindBadResponse, http.StatusOK, 0, fmt.Errorf("decode response %q: %w", clip(b, 200), err))
	}
	if ch.isError() {
		return c.streamError(b)
	}
	acc.add(ch, false)
	if !acc.sawChoice {
		return c.fail(agent.KindBadResponse, http.StatusOK, 0, errors.New("response has no choices"))
	}
	return nil
}

// accumulator collects the answer from chunks (or from one whole response).
type accumulator struct {
	start     time.Time
	ttft      time.Duration
	content   strings.Builder
	reasoning strings.Builder
	calls     []*callBuilder
	byIndex   map[int]*callBuilder
	finish    string
	model     string
	usage     *wireUsage
	sawChoice bool
}

type callBuilder struct {
	id, name string
	args     strings.Builder
}

func newAccumulator(start time.Time) *accumulator {
	return &accumulator{start: start, byIndex: make(map[int]*callBuilder)}
}

func (a *accumulator) add(ch wireChunk, streamed bool) {
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // we never ask for n > 1
		}
		a.sawChoice = true
		m := choice.Delta
		if !streamed {
			m = choice.Message
		}
		// vLLM may send the same text in both fields; take one.
		r := m.Reasoning
		if r == "" {
			r = m.ReasoningContent
		}
		if streamed && a.ttft == 0 && (m.Content != "" || r != "" || len(m.ToolCalls) > 0) {
			a.ttft = time.Since(a.start)
		}
		a.content.WriteString(m.Content)
		a.reasoning.WriteString(r)
		for _, tc := range m.ToolCalls {
			a.addToolCall(tc)
		}
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			a.finish = *choice.FinishReason
		}
	}
}

// addToolCall merges one tool-call delta: streamed fragments share an index;
// the first carries id and name, all carry pieces of the arguments. Without
// an index (non-streamed answers, some servers) a delta with an id starts a
// new call and one without continues the last.
func (a *accumulator) addToolCall(tc goopenai.ToolCall) {
	var b *callBuilder
	switch {
	case tc.Index != nil:
		b = a.byIndex[*tc.Index]
		if b == nil {
			b = &callBuilder{}
			a.byIndex[*tc.Index] = b
			a.calls = append(a.calls, b)
		}
	case tc.ID != "" || len(a.calls) == 0:
		b = &callBuilder{}
		a.calls = append(a.calls, b)
	default:
		b = a.calls[len(a.calls)-1]
	}
	if b.id == "" {
		b.id = tc.ID
	}
	if b.name == "" {
		b.name = tc.Function.Name
	}
	b.args.WriteString(tc.Function.Arguments)
}

func (a *accumulator) response(req agent.Request, latency time.Duration) *agent.Response {
	msg := agent.Message{
		Role:      agent.RoleAssistant,
		Content:   a.content.String(),
		Reasoning: a.reasoning.String(),
	}
	for _, b := range a.calls {
		id := b.id
		if id == "" {
			id = "call_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24]
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: id, Name: b.name, Arguments: finishArguments(b.args.String())})
	}
	var u agent.Usage
	if a.usage == nil {
		u = agent.EstimateUsage(req, msg)
		if msg.Reasoning == "" {
			u.ReasoningSource = agent.CountNone
		}
	} else {
		u.PromptTokens, u.PromptSource = a.usage.PromptTokens, agent.CountServer
		u.CompletionTokens, u.CompletionSource = a.usage.CompletionTokens, agent.CountServer
		if d := a.usage.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
			u.ReasoningTokens, u.ReasoningSource = *d.ReasoningTokens, agent.CountServer
		} else if msg.Reasoning != "" {
			// Reasoning is part of completion: never estimate more.
			u.ReasoningTokens = min(agent.EstimateTokens(msg.Reasoning), u.CompletionTokens)
			u.ReasoningSource = agent.CountEstimate
		}
	}
	u.Latency, u.TTFT, u.Calls = latency, a.ttft, 1
	return &agent.Response{Message: msg, Usage: u, FinishReason: a.finish, Model: a.model}
}

// finishArguments returns the accumulated arguments as JSON. Arguments that
// are not valid JSON (a model's mistake) are kept as a JSON string so the
// caller can show the model what it wrote.
func finishArguments(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// statusError reads a non-200 response and classifies it.
func (c *Client) statusError(ctx, callCtx context.Context, hresp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBytes))
	if err != nil && len(body) == 0 {
		if ierr := c.interruptedCtx(ctx, callCtx, err); ierr != nil {
			return ierr
		}
	}
	msg, _ := errorDetails(body)
	return c.classify(hresp.StatusCode, hresp.Header, body, errors.New(msg))
}

// classify maps an HTTP status (or an in-stream error code) to an error kind.
func (c *Client) classify(status int, h http.Header, body []byte, err error) *agent.Error {
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return c.fail(agent.KindRetryable, status, agent.RetryAfter(h, time.Now()), err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return c.fail(agent.KindAuth, status, 0, err)
	case status == http.StatusNotFound && modelNotFound(body, err.Error()):
		return c.fail(agent.KindModelNotFound, status, 0,
			fmt.Errorf("model %q is not served at %s: %w", c.model, c.baseURL, err))
	case status == http.StatusNotFound:
		return c.fail(agent.KindBadRequest, status, 0,
			fmt.Errorf("%s not found (does BaseURL end in /v1?): %w", c.url, err))
	case status >= 400:
		return c.fail(agent.KindBadRequest, status, 0, err)
	}
	return c.fail(agent.KindBadResponse, status, 0, fmt.Errorf("unexpected status: %w", err))
}

// modelNotFound recognises the 404 bodies of OpenAI ("code":"model_not_found",
// "The model `x` does not exist ..."), vLLM ("The model `x` does not exist.")
// and Ollama's OpenAI API ("model \"x\" not found, try pulling it first").
func modelNotFound(body []byte, msg string) bool {
	if bytes.Contains(body, []byte(`"model_not_found"`)) {
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") && (strings.Contains(m, "does not exist") || strings.Contains(m, "not found"))
}

// errorDetails extracts a message and numeric code from an error body in any
// of the shapes servers use: {"error":{"message":..,"code":..}} (OpenAI,
// vLLM >= 0.10, llama.cpp), {"message":..,"code":..} (older vLLM),
// {"error":"..."}, {"detail":"..."} (FastAPI), or plain text.
func errorDetails(body []byte) (msg string, code int) {
	var wrapped goopenai.ErrorResponse
	if json.Unmarshal(body, &wrapped) == nil && wrapped.Error != nil && wrapped.Error.Message != "" {
		return wrapped.Error.Message, intCode(wrapped.Error.Code)
	}
	var flat struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
		Detail  any    `json:"detail"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(body, &flat) == nil {
		switch {
		case flat.Message != "":
			return flat.Message, intCode(flat.Code)
		case flat.Error != nil:
			if s, ok := flat.Error.(string); ok {
				return s, intCode(flat.Code)
			}
		case flat.Detail != nil:
			if s, ok := flat.Detail.(string); ok {
				return s, intCode(flat.Code)
			}
			b, _ := json.Marshal(flat.Detail)
			return string(b), intCode(flat.Code)
		}
	}
	s := strings.TrimSpace(string(clip(body, 512)))
	if s == "" {
		s = "empty error body"
	}
	return s, 0
}

func intCode(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}

// interrupted classifies a failed HTTP exchange: the caller's ctx ends it
// unclassified, our own timeout and network errors are retryable.
func (c *Client) interrupted(ctx, callCtx context.Context, err error) error {
	if ierr := c.interruptedCtx(ctx, callCtx, err); ierr != nil {
		return ierr
	}
	return c.fail(agent.KindRetryable, 0, 0, err)
}

// interruptedCtx returns the error to report when a context ended the call,
// or nil when neither did.
func (c *Client) interruptedCtx(ctx, callCtx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai %s: %w", c.name, ctx.Err())
	}
	if callCtx.Err() != nil {
		return c.fail(agent.KindRetryable, 0, 0, fmt.Errorf("%w after %s: %w", agent.ErrCallTimeout, c.timeout, err))
	}
	return nil
}

func (c *Client) fail(kind agent.ErrorKind, status int, retryIn time.Duration, err error) *agent.Error {
	return &agent.Error{Kind: kind, Endpoint: c.name, Model: c.model, Status: status, RetryIn: retryIn, Err: err}
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
