package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestMain fails the package when a server, connection or stream goroutine
// outlives the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func waitNoLeaks(wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "waitNoLeaks") {
				continue
			}
			if strings.Contains(g, "net/http.") || strings.Contains(g, "internal/api.") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fakeService implements Service with func fields; nil fields fail.
type fakeService struct {
	submit func(ctx context.Context, spec []byte) (CampaignInfo, error)
	list   func(ctx context.Context) ([]CampaignInfo, error)
	show   func(ctx context.Context, id string) (CampaignInfo, error)
	cancel func(ctx context.Context, id string) error
	watch  func(ctx context.Context, id string) (<-chan Progress, error)
}

var _ Service = (*fakeService)(nil)

var errUnset = errors.New("fake: not set")

func (f *fakeService) Submit(ctx context.Context, spec []byte) (CampaignInfo, error) {
	if f.submit == nil {
		return CampaignInfo{}, errUnset
	}
	return f.submit(ctx, spec)
}

func (f *fakeService) List(ctx context.Context) ([]CampaignInfo, error) {
	if f.list == nil {
		return nil, errUnset
	}
	return f.list(ctx)
}

func (f *fakeService) Show(ctx context.Context, id string) (CampaignInfo, error) {
	if f.show == nil {
		return CampaignInfo{}, errUnset
	}
	return f.show(ctx, id)
}

func (f *fakeService) Cancel(ctx context.Context, id string) error {
	if f.cancel == nil {
		return errUnset
	}
	return f.cancel(ctx, id)
}

func (f *fakeService) Watch(ctx context.Context, id string) (<-chan Progress, error) {
	if f.watch == nil {
		return nil, errUnset
	}
	return f.watch(ctx, id)
}

const testToken = "0123456789abcdef-token"

// start runs a server on a free loopback port; cleanup stops it.
func start(t *testing.T, cfg Config, svc Service) (*Server, *Client) {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s, err := New(cfg, svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	c := &Client{BaseURL: "http://" + s.Addr(), Token: cfg.Token, HTTP: &http.Client{Transport: tr}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		tr.CloseIdleConnections()
	})
	return s, c
}

// do sends a raw request and returns status, headers and body.
func do(t *testing.T, c *Client, method, path, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, c.BaseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{Config{}, ""},
		{Config{Addr: "127.0.0.1:0"}, ""},
		{Config{Addr: "localhost:7878"}, ""},
		{Config{Addr: "[::1]:7878"}, ""},
		{Config{Addr: "127.1.2.3:80"}, ""},
		{Config{Addr: "0.0.0.0:7878"}, "not a loopback address: a token is required"},
		{Config{Addr: ":7878"}, "not a loopback address"},
		{Config{Addr: "[::]:7878"}, "not a loopback address"},
		{Config{Addr: "192.168.1.5:7878"}, "not a loopback address"},
		{Config{Addr: "kiln.example.com:7878"}, "not a loopback address"},
		{Config{Addr: "0.0.0.0:7878", Token: testToken}, ""},
		{Config{Addr: "0.0.0.0:7878", Token: "short"}, "at least 16 characters"},
		{Config{Token: "with space in the token"}, "printable ASCII without spaces"},
		{Config{Addr: "no-port"}, "missing port"},
		{Config{MaxBody: -1}, "max body must be >= 0"},
		{Config{ReadTimeout: -time.Second}, "read timeout must be >= 0"},
	}
	for _, tt := range tests {
		cfg := tt.cfg
		cfg.Defaults()
		err := cfg.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tt.cfg, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: error %v, want %q", tt.cfg, err, tt.want)
		}
		if _, nerr := New(tt.cfg, &fakeService{}, nil); (nerr == nil) != (err == nil) {
			t.Errorf("%+v: New disagrees with Validate: %v", tt.cfg, nerr)
		}
	}
	var def Config
	def.Defaults()
	if def.Addr != "127.0.0.1:7878" || def.MaxBody != 1<<20 || def.ReadHeaderTimeout == 0 || def.ReadTimeout == 0 || def.IdleTimeout == 0 || def.WriteTimeout == 0 {
		t.Errorf("defaults = %+v", def)
	}
}

var info1 = CampaignInfo{ID: "c1", Name: "demo", Lane: "c2x86", State: "running", Round: 1,
	Counts: map[string]int{"pass": 3}, Tokens: 42, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}

func TestRoutes(t *testing.T) {
	t.Parallel()
	var cancelled atomic.Value
	svc := &fakeService{
		submit: func(_ context.Context, spec []byte) (CampaignInfo, error) {
			switch string(spec) {
			case "bad":
				return CampaignInfo{}, &BadSpec{Err: errors.Join(errors.New("c.yaml:1: name: required"), errors.New("c.yaml:2: lane: required"))}
			case "boom":
				return CampaignInfo{}, errors.New("disk on fire at /secret/path")
			}
			return info1, nil
		},
		list: func(context.Context) ([]CampaignInfo, error) { return []CampaignInfo{info1}, nil },
		show: func(_ context.Context, id string) (CampaignInfo, error) {
			if id != "c1" {
				return CampaignInfo{}, fmt.Errorf("show %s: %w", id, ErrNotFound)
			}
			return info1, nil
		},
		cancel: func(_ context.Context, id string) error {
			switch id {
			case "done":
				return ErrConflict
			case "c1":
				cancelled.Store(id)
				return nil
			}
			return ErrNotFound
		},
	}
	_, c := start(t, Config{}, svc)

	infoJSON, _ := json.Marshal(info1)
	tests := []struct {
		method, path, body string
		code               int
		want               string // substring of the body
	}{
		{"GET", "/healthz", "", 200, `"status": "ok"`},
		{"POST", "/v1/campaigns", "name: demo\n", 201, `"id": "c1"`},
		{"POST", "/v1/campaigns", "bad", 400, `"details": [`},
		{"POST", "/v1/campaigns", "", 400, `"error": "empty body`},
		{"POST", "/v1/campaigns", "boom", 500, `"error": "internal error"`},
		{"GET", "/v1/campaigns", "", 200, `"campaigns": [`},
		{"GET", "/v1/campaigns/c1", "", 200, `"lane": "c2x86"`},
		{"GET", "/v1/campaigns/nope", "", 404, `"error": "campaign not found"`},
		{"POST", "/v1/campaigns/c1/cancel", "", 202, `"status": "cancel requested"`},
		{"POST", "/v1/campaigns/done/cancel", "", 409, `"error": "conflict`},
		{"POST", "/v1/campaigns/nope/cancel", "", 404, `campaign not found`},
		{"DELETE", "/v1/campaigns/c1", "", 405, `"error": "method DELETE not allowed"`},
		{"GET", "/v1/campaigns/c1/cancel", "", 405, `not allowed`},
		{"PUT", "/v1/campaigns", "", 405, `not allowed`},
		{"GET", "/v1/nothing", "", 404, `"error": "no such route"`},
	}
	for _, tt := range tests {
		code, h, body := do(t, c, tt.method, tt.path, tt.body)
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s %s: %d %s, want %d containing %q", tt.method, tt.path, code, body, tt.code, tt.want)
		}
		if ct := h.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: content type %q", tt.method, tt.path, ct)
		}
		if strings.Contains(body, "/secret/path") {
			t.Errorf("internal error leaked to the client: %s", body)
		}
	}
	if cancelled.Load() != "c1" {
		t.Errorf("Cancel not called")
	}
	var got CampaignInfo
	_, h, body := do(t, c, "GET", "/v1/campaigns/c1", "")
	if err := json.Unmarshal([]byte(body), &got); err != nil || !jsonEqual(got, info1) {
		t.Errorf("show = %s (%v), want %s", body, err, infoJSON)
	}
	if _, h, _ = do(t, c, "POST", "/v1/campaigns", "ok"); h.Get("Location") != "/v1/campaigns/c1" {
		t.Errorf("Location = %q", h.Get("Location"))
	}

	// The Go client over the same routes.
	ctx := t.Context()
	if info, err := c.Submit(ctx, []byte("ok")); err != nil || !jsonEqual(info, info1) {
		t.Errorf("Client.Submit = %+v, %v", info, err)
	}
	_, err := c.Submit(ctx, []byte("bad"))
	var bad *BadSpec
	if !errors.As(err, &bad) || bad.Err.Error() != "c.yaml:1: name: required\nc.yaml:2: lane: required" {
		t.Errorf("Client.Submit(bad) = %v", err)
	}
	var se *StatusError
	if _, err := c.Submit(ctx, []byte("boom")); !errors.As(err, &se) || se.Code != 500 {
		t.Errorf("Client.Submit(boom) = %v", err)
	}
	if l, err := c.List(ctx); err != nil || len(l) != 1 || l[0].ID != "c1" {
		t.Errorf("Client.List = %+v, %v", l, err)
	}
	if _, err := c.Show(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Client.Show(nope) = %v", err)
	}
	if err := c.Cancel(ctx, "c1"); err != nil {
		t.Errorf("Client.Cancel = %v", err)
	}
	if err := c.Cancel(ctx, "done"); !errors.Is(err, ErrConflict) {
		t.Errorf("Client.Cancel(done) = %v", err)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestToken(t *testing.T) {
	t.Parallel()
	svc := &fakeService{list: func(context.Context) ([]CampaignInfo, error) { return nil, nil }}
	_, c := start(t, Config{Token: testToken}, svc)
	tests := []struct {
		name, path, auth string
		code             int
	}{
		{"none", "/v1/campaigns", "", 401},
		{"wrong", "/v1/campaigns", "Bearer " + strings.Repeat("x", len(testToken)), 401},
		{"prefix of token", "/v1/campaigns", "Bearer " + testToken[:10], 401},
		{"basic", "/v1/campaigns", "Basic " + testToken, 401},
		{"token alone", "/v1/campaigns", testToken, 401},
		{"right", "/v1/campaigns", "Bearer " + testToken, 200},
		{"scheme case-insensitive", "/v1/campaigns", "bearer " + testToken, 200},
		{"unknown route needs a token too", "/v1/nothing", "", 401},
		{"healthz is free", "/healthz", "", 200},
	}
	for _, tt := range tests {
		var hdr []string
		if tt.auth != "" {
			hdr = []string{"Authorization", tt.auth}
		}
		code, h, body := do(t, c, "GET", tt.path, "", hdr...)
		if code != tt.code {
			t.Errorf("%s: %d %s, want %d", tt.name, code, body, tt.code)
		}
		if code == 401 && (h.Get("WWW-Authenticate") == "" || !strings.Contains(body, `"error"`)) {
			t.Errorf("%s: 401 without WWW-Authenticate or JSON error: %v %s", tt.name, h, body)
		}
	}
	// With a token the Host header is not restricted (reverse proxies).
	if code, _, _ := do(t, c, "GET", "/v1/campaigns", "", "Authorization", "Bearer "+testToken, "Host", "kiln.example.com"); code != 200 {
		t.Errorf("token + foreign Host: %d", code)
	}
	// The client sends the token itself.
	if _, err := c.List(t.Context()); err != nil {
		t.Errorf("Client.List with token: %v", err)
	}
	c2 := *c
	c2.Token = ""
	var se *StatusError
	if _, err := c2.List(t.Context()); !errors.As(err, &se) || se.Code != 401 {
		t.Errorf("Client.List without token: %v", err)
	}
}

func TestHostAndOrigin(t *testing.T) {
	t.Parallel()
	var submits atomic.Int32
	svc := &fakeService{
		list: func(context.Context) ([]CampaignInfo, error) { return nil, nil },
		submit: func(context.Context, []byte) (CampaignInfo, error) {
			submits.Add(1)
			return info1, nil
		},
	}
	_, c := start(t, Config{}, svc)
	tests := []struct {
		name   string
		method string
		hdr    []string
		code   int
	}{
		{"loopback host", "GET", nil, 200},
		{"localhost host", "GET", []string{"Host", "localhost:7878"}, 200},
		{"rebinding host", "GET", []string{"Host", "attacker.example:7878"}, 403},
		{"cross-site post", "POST", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://attacker.example"}, 403},
		{"cross-origin post, old browser", "POST", []string{"Origin", "https://attacker.example"}, 403},
		{"same-origin post", "POST", []string{"Sec-Fetch-Site", "same-origin"}, 201},
		{"cross-site get is safe", "GET", []string{"Sec-Fetch-Site", "cross-site"}, 200},
	}
	for _, tt := range tests {
		body := ""
		if tt.method == "POST" {
			body = "name: x\n"
		}
		code, _, resp := do(t, c, tt.method, "/v1/campaigns", body, tt.hdr...)
		if code != tt.code {
			t.Errorf("%s: %d %s, want %d", tt.name, code, resp, tt.code)
		}
	}
	if n := submits.Load(); n != 1 {
		t.Errorf("Submit called %d times, want 1 (only the same-origin post)", n)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	var submits atomic.Int32
	svc := &fakeService{submit: func(_ context.Context, spec []byte) (CampaignInfo, error) {
		submits.Add(1)
		return CampaignInfo{ID: fmt.Sprint(len(spec))}, nil
	}}
	_, c := start(t, Config{MaxBody: 64}, svc)

	// Declared too large: refused before reading.
	if code, _, body := do(t, c, "POST", "/v1/campaigns", strings.Repeat("x", 1000)); code != 413 || !strings.Contains(body, "larger than 64 bytes") {
		t.Errorf("content-length body: %d %s", code, body)
	}
	// Chunked, so only the reader can tell.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(strings.Repeat("y", 1000)))
		pw.Close()
	}()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", c.BaseURL+"/v1/campaigns", pr)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(string(b), "larger than 64 bytes") {
		t.Errorf("chunked body: %d %s", resp.StatusCode, b)
	}
	// Exactly the limit passes.
	if code, _, body := do(t, c, "POST", "/v1/campaigns", strings.Repeat("z", 64)); code != 201 || !strings.Contains(body, `"id": "64"`) {
		t.Errorf("body at the limit: %d %s", code, body)
	}
	if n := submits.Load(); n != 1 {
		t.Errorf("Submit called %d times, want 1", n)
	}
}

// progressFeed returns a Watch that sends n updates, gap apart, then ends.
func progressFeed(n int, gap time.Duration) func(context.Context, string) (<-chan Progress, error) {
	return func(ctx context.Context, id string) (<-chan Progress, error) {
		if id != "c1" {
			return nil, ErrNotFound
		}
		ch := make(chan Progress)
		go func() {
			defer close(ch)
			for i := 1; i <= n; i++ {
				select {
				case <-time.After(gap):
				case <-ctx.Done():
					return
				}
				state := "running"
				if i == n {
					state = "done"
				}
				select {
				case ch <- Progress{Time: time.Now().UTC(), State: state, Done: i, Total: n, Pass: i, Tokens: int64(100 * i)}:
				case <-ctx.Done():
					return
				}
			}
		}()
		return ch, nil
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	// The stream outlives ReadTimeout and WriteTimeout several times over:
	// it must survive both (read deadline cleared, per-write deadlines).
	cfg := Config{ReadTimeout: 150 * time.Millisecond, WriteTimeout: 150 * time.Millisecond, Heartbeat: 40 * time.Millisecond}
	_, c := start(t, cfg, &fakeService{watch: progressFeed(4, 150*time.Millisecond)})

	req, _ := http.NewRequestWithContext(t.Context(), "GET", c.BaseURL+"/v1/campaigns/c1/events", nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	var events []string
	var heartbeats int
	var ids []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == ": heartbeat":
			heartbeats++
		case strings.HasPrefix(line, "id: "):
			ids = append(ids, strings.TrimPrefix(line, "id: "))
		case strings.HasPrefix(line, "event: "):
			events = append(events, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			if events[len(events)-1] == "progress" {
				var p Progress
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &p); err != nil || p.Total != 4 || p.Done != len(ids) {
					t.Errorf("data %q: %+v %v", line, p, err)
				}
			} else if line != `data: {"state":"done"}` {
				t.Errorf("end data = %q", line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("stream cut: %v (events so far %q)", err, events)
	}
	if want := []string{"progress", "progress", "progress", "progress", "end"}; !slices.Equal(events, want) {
		t.Errorf("events = %q, want %q", events, want)
	}
	if !slices.Equal(ids, []string{"1", "2", "3", "4"}) {
		t.Errorf("ids = %q", ids)
	}
	if heartbeats < 3 {
		t.Errorf("%d heartbeats, want several", heartbeats)
	}

	// The Go client sees the same stream.
	ch, err := c.Watch(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	var got []Progress
	for p := range ch {
		got = append(got, p)
	}
	if len(got) != 4 || got[3].State != "done" || got[3].Tokens != 400 {
		t.Errorf("Client.Watch got %+v", got)
	}
	if _, err := c.Watch(t.Context(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Watch(nope) = %v", err)
	}
	if code, _, body := do(t, c, "GET", "/v1/campaigns/nope/events", ""); code != 404 || !strings.Contains(body, "campaign not found") {
		t.Errorf("events of unknown campaign: %d %s", code, body)
	}
}

// endless is a Watch that never ends by itself; it reports when its ctx ends.
func endless(done chan<- struct{}, msg string, every time.Duration) func(context.Context, string) (<-chan Progress, error) {
	return func(ctx context.Context, id string) (<-chan Progress, error) {
		ch := make(chan Progress)
		go func() {
			defer close(ch)
			defer close(done)
			for {
				select {
				case ch <- Progress{State: "running", Message: msg}:
				case <-ctx.Done():
					return
				}
				if every > 0 {
					select {
					case <-time.After(every):
					case <-ctx.Done():
						return
					}
				}
			}
		}()
		return ch, nil
	}
}

func TestStopEndsStreams(t *testing.T) {
	t.Parallel()
	watchDone := make(chan struct{})
	s, c := start(t, Config{}, &fakeService{watch: endless(watchDone, "", 20*time.Millisecond)})
	ch, err := c.Watch(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	<-ch // streaming

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Stop took %v with an open stream", d)
	}
	select {
	case <-watchDone:
	case <-time.After(2 * time.Second):
		t.Fatal("Watch ctx not cancelled by Stop")
	}
	for range ch { // the client's stream ends
	}
	// Idempotent, and a stopped server does not start again.
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := s.Start(t.Context()); err == nil {
		t.Error("Start after Stop succeeded")
	}
	if _, err := c.List(t.Context()); err == nil {
		t.Error("request after Stop succeeded")
	}
}

func TestClientLeaves(t *testing.T) {
	t.Parallel()
	watchDone := make(chan struct{})
	_, c := start(t, Config{}, &fakeService{watch: endless(watchDone, "", 10*time.Millisecond)})
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := c.Watch(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	for range ch { // closed once the client's reader sees ctx
	}
	select {
	case <-watchDone: // the server noticed and cancelled Watch
	case <-time.After(5 * time.Second):
		t.Fatal("server kept streaming to a client that left")
	}
}

func TestSlowReaderCutOff(t *testing.T) {
	t.Parallel()
	// A client that opens a stream and never reads: once the socket buffers
	// fill, a write misses its deadline and the stream (and Watch) ends.
	watchDone := make(chan struct{})
	big := strings.Repeat("x", 256<<10)
	s, _ := start(t, Config{WriteTimeout: 200 * time.Millisecond}, &fakeService{watch: endless(watchDone, big, 0)})
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /v1/campaigns/c1/events HTTP/1.1\r\nHost: %s\r\n\r\n", s.Addr()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-watchDone:
	case <-time.After(20 * time.Second):
		t.Fatal("a client that does not read was not cut off")
	}
}

func TestSlowClients(t *testing.T) {
	t.Parallel()
	svc := &fakeService{submit: func(context.Context, []byte) (CampaignInfo, error) { return info1, nil }}
	s, _ := start(t, Config{ReadHeaderTimeout: 100 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}, svc)

	t.Run("headers", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(conn)
		if d := time.Since(begin); err != nil || d > 2*time.Second {
			t.Errorf("slow-header client kept for %v (err %v)", d, err)
		}
		if len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 408") {
			t.Errorf("answer to a slow-header client: %q", b)
		}
	})
	t.Run("body", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "POST /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nname: x\n"); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer to a slow-body client: %v", err)
		}
		resp.Body.Close()
		if d := time.Since(begin); resp.StatusCode != http.StatusRequestTimeout || d > 2*time.Second {
			t.Errorf("slow body: status %d after %v", resp.StatusCode, d)
		}
	})
}

// trickle writes data to conn one byte every gap (a slowloris client) until
// it is all sent or a write fails; the channel gets the write error (nil
// when everything was sent).
func trickle(conn net.Conn, data string, gap time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		for i := 0; i < len(data); i++ {
			if _, err := conn.Write([]byte{data[i]}); err != nil {
				done <- err
				return
			}
			time.Sleep(gap)
		}
		done <- nil
	}()
	return done
}

// TestTrickledRequests: clients that send their headers or body a byte at a
// time, each byte well within any per-read timeout, are still cut off when
// the whole header or request has taken ReadHeaderTimeout or ReadTimeout
// (Go's server sets absolute deadlines, so trickling does not extend them),
// and many of them do not keep a normal client from being served.
func TestTrickledRequests(t *testing.T) {
	t.Parallel()
	svc := &fakeService{
		submit: func(context.Context, []byte) (CampaignInfo, error) { return info1, nil },
		list:   func(context.Context) ([]CampaignInfo, error) { return nil, nil },
	}
	const gap = 20 * time.Millisecond
	// What the clients would send: 5 s worth of bytes at one per 20 ms.
	header := "GET /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + strings.Repeat("a", 200) + "\r\n\r\n"
	body := strings.Repeat("b", 250)

	// cutOff reads what the server answers on conn and how long it took
	// to end the connection.
	cutOff := func(t *testing.T, conn net.Conn, sent <-chan error) (string, time.Duration) {
		t.Helper()
		begin := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(conn)
		d := time.Since(begin)
		// A reset is the server ending it too: it closed with trickled
		// bytes unread, so the kernel answered them with RST (seen under
		// load in the default tier).
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("reading the answer: %v", err)
		}
		conn.Close()
		if err := <-sent; err == nil {
			t.Errorf("the whole trickled request went through before the server cut it off")
		}
		return string(b), d
	}

	t.Run("headers", func(t *testing.T) {
		t.Parallel()
		s, _ := start(t, Config{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 5 * time.Second}, svc)
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		resp, d := cutOff(t, conn, trickle(conn, header, gap))
		if d > 2*time.Second {
			t.Errorf("trickled headers kept for %v, want about 200ms", d)
		}
		// Go's server answers 400 (or 408) to a header cut off mid-way,
		// or just closes; never the route's 200.
		if resp != "" && !strings.HasPrefix(resp, "HTTP/1.1 408") && !strings.HasPrefix(resp, "HTTP/1.1 400") {
			t.Errorf("answer to trickled headers: %.100q", resp)
		}
	})
	t.Run("body", func(t *testing.T) {
		t.Parallel()
		s, _ := start(t, Config{ReadHeaderTimeout: time.Second, ReadTimeout: 300 * time.Millisecond}, svc)
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		head := fmt.Sprintf("POST /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n", len(body))
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		resp, d := cutOff(t, conn, trickle(conn, body, gap))
		if d > 2*time.Second {
			t.Errorf("trickled body kept for %v, want about 300ms", d)
		}
		if !strings.HasPrefix(resp, "HTTP/1.1 408") || !strings.Contains(resp, "request body too slow") {
			t.Errorf("answer to a trickled body: %.200q, want 408", resp)
		}
	})
	t.Run("many", func(t *testing.T) {
		t.Parallel()
		s, c := start(t, Config{ReadHeaderTimeout: 2 * time.Second}, svc)
		var sent []<-chan error
		for range 64 {
			conn, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			sent = append(sent, trickle(conn, header, gap))
		}
		time.Sleep(100 * time.Millisecond) // all of them are in the middle of their headers
		begin := time.Now()
		if code, _, body := do(t, c, "GET", "/v1/campaigns", ""); code != 200 {
			t.Errorf("normal client beside 64 slow ones: %d %s", code, body)
		}
		if d := time.Since(begin); d > time.Second {
			t.Errorf("normal client beside 64 slow ones served after %v", d)
		}
		for _, ch := range sent {
			if err := <-ch; err == nil {
				t.Errorf("a trickled request went through")
			}
		}
	})
}

// TestTokenOnPublicBind: bound to every interface, the server refuses to
// start without a token, and with one it refuses requests without it that
// come in over a non-loopback address.
func TestTokenOnPublicBind(t *testing.T) {
	t.Parallel()
	svc := &fakeService{list: func(context.Context) ([]CampaignInfo, error) { return nil, nil }}
	if _, err := New(Config{Addr: "0.0.0.0:0"}, svc, nil); err == nil || !strings.Contains(err.Error(), "token is required") {
		t.Fatalf("New on 0.0.0.0 without a token: %v", err)
	}
	s, c := start(t, Config{Addr: "0.0.0.0:0", Token: testToken}, svc)
	_, port, _ := net.SplitHostPort(s.Addr())
	host := "127.0.0.1"
	if ip := publicIP(); ip != "" {
		host = ip
	} else {
		t.Log("no non-loopback IPv4 address here; using loopback")
	}
	c.BaseURL = "http://" + net.JoinHostPort(host, port)
	for _, tt := range []struct {
		name, path, auth string
		code             int
	}{
		{"no token", "/v1/campaigns", "", 401},
		{"wrong token", "/v1/campaigns", "Bearer " + strings.Repeat("y", len(testToken)), 401},
		{"token", "/v1/campaigns", "Bearer " + testToken, 200},
		{"healthz", "/healthz", "", 200},
	} {
		var hdr []string
		if tt.auth != "" {
			hdr = []string{"Authorization", tt.auth}
		}
		if code, _, body := do(t, c, "GET", tt.path, "", hdr...); code != tt.code {
			t.Errorf("%s via %s: %d %s, want %d", tt.name, host, code, body, tt.code)
		}
	}
}

// publicIP returns a non-loopback IPv4 address of this host, or "".
func publicIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Addr: "127.0.0.1:0"}, &fakeService{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
	s, _ = New(Config{Addr: "127.0.0.1:0"}, &fakeService{}, nil)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if _, port, _ := net.SplitHostPort(addr); port == "0" || port == "" {
		t.Errorf("Addr() = %q, want the bound port", addr)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("second Start succeeded")
	}
	// The port is taken now: another server fails in Start.
	other, err := New(Config{Addr: addr}, &fakeService{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(ctx); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Start on a taken port: %v", err)
	}
	if err := other.Stop(ctx); err != nil {
		t.Errorf("Stop of a server that never started: %v", err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	for range 2 {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("still listening after Stop")
	}
	if _, err := New(Config{}, nil, nil); err == nil {
		t.Error("New with a nil service succeeded")
	}
}
