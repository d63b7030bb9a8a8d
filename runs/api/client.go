package api

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
	"strings"
)

// Client talks to a kiln server; it implements Service, so CLI verbs can use
// a running daemon the way the daemon uses its engine.
type Client struct {
	// BaseURL is the server's root, such as "http://127.0.0.1:7878".
	BaseURL string
	// Token is sent as a bearer token when set.
	Token string
	// HTTP is the client to use (nil: http.DefaultClient). Give it no
	// overall Timeout if you Watch: streams last as long as campaigns; bound
	// calls with ctx instead.
	HTTP *http.Client
}

var _ Service = (*Client)(nil)

// StatusError is an error status that has no sentinel of its own.
type StatusError struct {
	Code int
	Msg  string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("kiln api: %d %s: %s", e.Code, http.StatusText(e.Code), e.Msg)
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) request(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("kiln api: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/yaml")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("kiln api: %w", err)
	}
	return resp, nil
}

// call sends a request and decodes a JSON answer with status want into out.
func (c *Client) call(ctx context.Context, method, path string, body []byte, want int, out any) error {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return responseError(resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("kiln api: decode %s %s: %w", method, path, err)
	}
	return nil
}

// responseError turns an error response into ErrNotFound, ErrConflict,
// *BadSpec (with one wrapped error per detail) or *StatusError.
func responseError(resp *http.Response) error {
	var body errorBody
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if json.Unmarshal(raw, &body) != nil || body.Error == "" {
		body.Error = strings.TrimSpace(string(raw))
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusConflict:
		return ErrConflict
	case http.StatusBadRequest:
		if len(body.Details) > 0 {
			errs := make([]error, len(body.Details))
			for i, d := range body.Details {
				errs[i] = errors.New(d)
			}
			return &BadSpec{Err: errors.Join(errs...)}
		}
		return &BadSpec{Err: errors.New(body.Error)}
	}
	return &StatusError{Code: resp.StatusCode, Msg: body.Error}
}

// Submit sends a spec; a spec the server refuses comes back as *BadSpec.
func (c *Client) Submit(ctx context.Context, specYAML []byte) (CampaignInfo, error) {
	var info CampaignInfo
	err := c.call(ctx, http.MethodPost, "/v1/campaigns", specYAML, http.StatusCreated, &info)
	return info, err
}

// List returns every campaign.
func (c *Client) List(ctx context.Context) ([]CampaignInfo, error) {
	var out struct {
		Campaigns []CampaignInfo `json:"campaigns"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/campaigns", nil, http.StatusOK, &out)
	return out.Campaigns, err
}

// Workers returns GET /v1/workers: the worker hosts of the daemon's
// scale-out queue, each as the JSON object the daemon sent. A daemon
// without dispatch answers 404 (ErrNotFound).
func (c *Client) Workers(ctx context.Context) ([]json.RawMessage, error) {
	var out struct {
		Workers []json.RawMessage `json:"workers"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/workers", nil, http.StatusOK, &out)
	return out.Workers, err
}

// Queue returns GET /v1/queue: the daemon's scale-out queue (jobs by
// capability, job results, retries of failed jobs), as JSON; ErrNotFound
// when dispatch is off.
func (c *Client) Queue(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, http.MethodGet, "/v1/queue", nil, http.StatusOK, &out)
	return out, err
}

// Show returns one campaign.
func (c *Client) Show(ctx context.Context, id string) (CampaignInfo, error) {
	var info CampaignInfo
	err := c.call(ctx, http.MethodGet, "/v1/campaigns/"+url.PathEscape(id), nil, http.StatusOK, &info)
	return info, err
}

// Cancel asks the server to cancel a campaign.
func (c *Client) Cancel(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodPost, "/v1/campaigns/"+url.PathEscape(id)+"/cancel", nil, http.StatusAccepted, nil)
}

// Watch follows a campaign's event stream. The channel is closed when the
// server ends the stream, the connection fails, or ctx is done; the reading
// goroutine exits then too.
func (c *Client) Watch(ctx context.Context, id string) (<-chan Progress, error) {
	resp, err := c.request(ctx, http.MethodGet, "/v1/campaigns/"+url.PathEscape(id)+"/events", nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, responseError(resp)
	}
	out := make(chan Progress)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		readEvents(ctx, resp.Body, out)
	}()
	return out, nil
}

// readEvents parses a Server-Sent Events stream, sending each "progress"
// event, until "end", EOF, an error or ctx.
func readEvents(ctx context.Context, r io.Reader, out chan<- Progress) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var event string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		if line != "" {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				event = value
			case "data":
				data = append(append(data, value...), '\n')
			}
			continue
		}
		// A blank line dispatches the event.
		switch event {
		case "end":
			return
		case "progress":
			var p Progress
			if json.Unmarshal(data, &p) == nil {
				select {
				case out <- p:
				case <-ctx.Done():
					return
				}
			}
		}
		event, data = "", data[:0]
	}
}
