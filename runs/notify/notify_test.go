package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// receiver is a webhook endpoint that records what it is sent. fail, when
// set, gives the status for the nth request (1-based); 0 means 200.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []Payload
	hits int
	fail func(n int) int
	ch   chan Payload // every accepted payload, buffered
}

func newReceiver(t *testing.T, fail func(n int) int) *receiver {
	t.Helper()
	r := &receiver{fail: fail, ch: make(chan Payload, 64)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook request %s with content type %q", req.Method, req.Header.Get("Content-Type"))
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
		}
		r.mu.Lock()
		r.hits++
		n := r.hits
		r.mu.Unlock()
		if r.fail != nil {
			if code := r.fail(n); code != 0 {
				http.Error(w, "nope", code)
				return
			}
		}
		var p Payload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("webhook body is not a payload: %v: %s", err, body)
		}
		r.mu.Lock()
		r.got = append(r.got, p)
		r.mu.Unlock()
		r.ch <- p
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits
}

func (r *receiver) payloads() []Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Payload(nil), r.got...)
}

// next waits for the next accepted payload.
func (r *receiver) next(t *testing.T, within time.Duration) Payload {
	t.Helper()
	select {
	case p := <-r.ch:
		return p
	case <-time.After(within):
		t.Fatalf("no webhook call within %s (%d requests)", within, r.requests())
	}
	return Payload{}
}

// quiet checks that nothing arrives for d.
func (r *receiver) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case p := <-r.ch:
		t.Fatalf("unexpected webhook call: %+v", p)
	case <-time.After(d):
	}
}

// fixture is a real store with one campaign of n tasks.
type fixture struct {
	st   *runs.Store
	camp runs.Campaign
}

func newFixture(t *testing.T, tasks int) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: "nightly", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	var ts []runs.Task
	for i := range tasks {
		ts = append(ts, runs.Task{Key: fmt.Sprintf("r0/item%d#0", i), Lane: "c2x86", Prompt: "p"})
	}
	if _, err := st.AddTasks(ctx, c.ID, ts); err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, camp: c}
}

func (f *fixture) setState(t *testing.T, s runs.CampaignState, note string) {
	t.Helper()
	if err := f.st.SetCampaignState(context.Background(), f.camp.ID, s, note); err != nil {
		t.Fatal(err)
	}
}

// judge claims one task and stores a verdict for it.
func (f *fixture) judge(t *testing.T, pass bool) {
	t.Helper()
	ctx := context.Background()
	l, err := f.st.Claim(ctx, f.camp.ID, "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a := runs.Attempt{Answer: "x", Usage: runs.Usage{PromptTokens: 10, CompletionTokens: 5}}
	v := runs.Verdict{Pass: pass, Stage: "compare"}
	if !pass {
		v.Class = "wrong_output"
	}
	if err := f.st.Finish(ctx, l, a, v); err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, cfg Config, st Store) *Notifier {
	t.Helper()
	n, err := New(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	return n
}

// fast is a config that polls often and retries quickly.
func fast(url string) Config {
	return Config{URL: url, PollEvery: 20 * time.Millisecond, Backoff: 10 * time.Millisecond, Timeout: 2 * time.Second}
}

// TestDone: a campaign that finishes is reported once, with its counts;
// a campaign already done before the notifier started is not.
func TestDone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	old, err := f.st.CreateCampaign(context.Background(), runs.Campaign{Name: "old", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []runs.CampaignState{runs.CampaignRunning, runs.CampaignDone} {
		if err := f.st.SetCampaignState(context.Background(), old.ID, s, ""); err != nil {
			t.Fatal(err)
		}
	}
	r := newReceiver(t, nil)
	start(t, fast(r.srv.URL), f.st)
	f.setState(t, runs.CampaignRunning, "")
	f.judge(t, true)
	f.judge(t, true)
	f.judge(t, false)
	f.setState(t, runs.CampaignDone, "")
	p := r.next(t, 5*time.Second)
	want := Counts{Tasks: 3, Done: 3, Pass: 2, Fail: 1, Tokens: 45}
	if p.Event != EventDone || p.Campaign != f.camp.ID || p.Name != "nightly" || p.Lane != "c2x86" || p.State != "done" ||
		p.Counts != want || p.Time.IsZero() || !strings.Contains(p.Text, "nightly") {
		t.Fatalf("payload %+v, want done with counts %+v", p, want)
	}
	r.quiet(t, 200*time.Millisecond)
}

// TestFailedAndCancelled: failed carries the campaign's note; cancelled
// is reported too.
func TestFailedAndCancelled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	other, err := f.st.CreateCampaign(context.Background(), runs.Campaign{Name: "other", Lane: "cuda-synth"})
	if err != nil {
		t.Fatal(err)
	}
	r := newReceiver(t, nil)
	start(t, fast(r.srv.URL), f.st)
	f.setState(t, runs.CampaignRunning, "")
	f.judge(t, false)
	f.setState(t, runs.CampaignFailed, "model not found: qwen")
	p := r.next(t, 5*time.Second)
	if p.Event != EventFailed || p.State != "failed" || p.Note != "model not found: qwen" || p.Counts.Done != 1 || p.Counts.Queued != 1 {
		t.Fatalf("failed payload %+v", p)
	}
	if err := f.st.SetCampaignState(context.Background(), other.ID, runs.CampaignCancelled, "cancelled by request"); err != nil {
		t.Fatal(err)
	}
	p = r.next(t, 5*time.Second)
	if p.Event != EventCancelled || p.Campaign != other.ID || p.Lane != "cuda-synth" || p.Note != "cancelled by request" {
		t.Fatalf("cancelled payload %+v", p)
	}
}

// TestStalled: a running campaign without a judged task for StallAfter is
// reported once per stall; a judged task re-arms the check.
func TestStalled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	r := newReceiver(t, nil)
	cfg := fast(r.srv.URL)
	cfg.StallAfter = 300 * time.Millisecond
	f.setState(t, runs.CampaignRunning, "")
	begin := time.Now()
	start(t, cfg, f.st)
	p := r.next(t, 5*time.Second)
	if took := time.Since(begin); p.Event != EventStalled || p.State != "running" || p.Counts.Queued != 3 || took < cfg.StallAfter {
		t.Fatalf("after %s: payload %+v, want stalled", took, p)
	}
	if !strings.Contains(p.Note, "no task judged") {
		t.Fatalf("stall note %q", p.Note)
	}
	// Once per stall: nothing more while it stays stalled.
	r.quiet(t, 3*cfg.StallAfter)

	// Progress re-arms; the next stall is reported again, counts moved on.
	f.judge(t, true)
	p = r.next(t, 5*time.Second)
	if p.Event != EventStalled || p.Counts.Done != 1 || p.Counts.Pass != 1 {
		t.Fatalf("second stall payload %+v", p)
	}
	// Progress that keeps coming within StallAfter: no stall.
	for range 2 {
		time.Sleep(cfg.StallAfter / 3)
		f.judge(t, true)
	}
	f.setState(t, runs.CampaignDone, "")
	p = r.next(t, 5*time.Second)
	if p.Event != EventDone || p.Counts.Done != 3 {
		t.Fatalf("after progress: payload %+v, want done", p)
	}
}

// TestRetryOn500: a webhook answering 500 is tried again with backoff
// until it takes the event; a 400 is not retried.
func TestRetryOn500(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	r := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return 0
	})
	start(t, fast(r.srv.URL), f.st)
	f.setState(t, runs.CampaignRunning, "")
	f.setState(t, runs.CampaignDone, "")
	p := r.next(t, 10*time.Second)
	if p.Event != EventDone || r.requests() != 3 || len(r.payloads()) != 1 {
		t.Fatalf("payload %+v after %d requests", p, r.requests())
	}

	// A 400 is final: one request, no retry.
	g := newFixture(t, 1)
	bad := newReceiver(t, func(int) int { return http.StatusBadRequest })
	n := start(t, fast(bad.srv.URL), g.st)
	g.setState(t, runs.CampaignRunning, "")
	g.setState(t, runs.CampaignFailed, "boom")
	deadline := time.Now().Add(5 * time.Second)
	for bad.requests() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // time for (wrong) retries
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := bad.requests(); got != 1 {
		t.Fatalf("%d requests for a 400, want 1", got)
	}
}

// TestRetriesGiveUp: a webhook that always fails gets 1+Retries requests,
// and the notifier goes on with the next event.
func TestRetriesGiveUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	r := newReceiver(t, func(int) int { return http.StatusBadGateway })
	cfg := fast(r.srv.URL)
	cfg.Retries = 2
	n := start(t, cfg, f.st)
	f.setState(t, runs.CampaignRunning, "")
	f.setState(t, runs.CampaignDone, "")
	deadline := time.Now().Add(5 * time.Second)
	for r.requests() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.requests(); got != 3 {
		t.Fatalf("%d requests, want 3 (1 + 2 retries)", got)
	}
}

// TestNotConfigured: without a URL the notifier reads nothing, starts no
// goroutine and calls nothing, while campaigns end.
func TestNotConfigured(t *testing.T) {
	f := newFixture(t, 1)
	r := newReceiver(t, nil)
	before := runtime.NumGoroutine()
	counting := &countingStore{Store: f.st}
	n, err := New(Config{StallAfter: time.Millisecond, PollEvery: 10 * time.Millisecond}, counting)
	if err != nil {
		t.Fatal(err)
	}
	if n.Enabled() {
		t.Fatal("enabled without a URL")
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.setState(t, runs.CampaignRunning, "")
	f.judge(t, true)
	f.setState(t, runs.CampaignDone, "")
	r.quiet(t, 200*time.Millisecond)
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines, %d before Start", g, before)
	}
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := counting.calls(); c != 0 {
		t.Fatalf("the store was read %d times", c)
	}
	if r.requests() != 0 {
		t.Fatal("webhook called")
	}
}

// countingStore counts the reads of a real store.
type countingStore struct {
	Store
	mu sync.Mutex
	n  int
}

func (s *countingStore) ListCampaigns(ctx context.Context) ([]runs.Campaign, error) {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	return s.Store.ListCampaigns(ctx)
}

func (s *countingStore) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// TestStopIdempotent: Stop before Start, twice after Start, and Start after
// Stop; the goroutines are gone after Stop, and a last poll at Stop reports
// a campaign that ended just before.
func TestStopIdempotent(t *testing.T) {
	f := newFixture(t, 1)
	r := newReceiver(t, nil)
	cfg := fast(r.srv.URL)
	cfg.PollEvery = time.Hour // only Stop's last poll can see the change
	n, err := New(cfg, f.st)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(context.Background()); err != nil {
		t.Fatalf("stop before start: %v", err)
	}
	n, err = New(cfg, f.st)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err == nil {
		t.Fatal("second start accepted")
	}
	f.setState(t, runs.CampaignRunning, "")
	f.setState(t, runs.CampaignCancelled, "cancelled by request")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(ctx); err != nil {
		t.Fatalf("second stop: %v", err)
	}
	if p := r.payloads(); len(p) != 1 || p[0].Event != EventCancelled {
		t.Fatalf("payloads at stop: %+v", p)
	}
	// The goroutines have ended (allow the HTTP client's idle connection
	// goroutines a moment to go after the receiver closes them).
	r.srv.CloseClientConnections()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines after stop, %d before start", g, before)
	}
	if err := n.Start(context.Background()); err == nil {
		t.Fatal("start after stop accepted")
	}
}

// TestStopAbandonsAtDeadline: Stop with a short context does not wait for
// a webhook that hangs.
func TestStopAbandonsAtDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	cfg := fast(hang.URL)
	cfg.Timeout = time.Minute
	n := start(t, cfg, f.st)
	f.setState(t, runs.CampaignRunning, "")
	f.setState(t, runs.CampaignDone, "")
	time.Sleep(200 * time.Millisecond) // the delivery is in flight
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 3*time.Second {
		t.Fatalf("stop took %s", took)
	}
}

// TestConfig: bad URLs and durations are refused without quoting the URL.
func TestConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{
		{URL: "ftp://hooks.example/x"},
		{URL: "https:///secret-token"},
		{URL: "https://hooks.example/secret-token", StallAfter: -time.Second},
	} {
		_, err := New(c, &runs.Store{})
		if err == nil {
			t.Errorf("%+v accepted", c)
			continue
		}
		if strings.Contains(err.Error(), "secret-token") {
			t.Errorf("error quotes the URL: %v", err)
		}
	}
	if _, err := New(Config{URL: "https://hooks.example/x"}, nil); err == nil {
		t.Error("nil store accepted")
	}
}
