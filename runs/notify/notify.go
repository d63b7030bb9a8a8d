// Package notify calls a webhook when a campaign ends (done, failed,
// cancelled) or stalls (no attempt finished for a while as it runs).
//
// A Notifier watches the store, not the engine: every PollEvery it lists
// the campaigns and compares each one's state and finished-task count with
// what it saw before, so it never slows the engine down and also sees
// campaigns that another process runs on the same store. Events go through
// a bounded queue to one sender goroutine, which POSTs each as JSON (see
// Payload) with a per-request timeout and retries with doubling backoff on
// network errors, 5xx, 408 and 429; an event that cannot be delivered is
// logged and dropped, and so is an event that finds the queue full.
//
// Events:
//
//	done, failed, cancelled   the campaign reached that state
//	stalled                   running, and no task was judged for StallAfter;
//	                          once per stall, re-armed when a task is judged
//
// The webhook URL may hold a secret (Slack's do): it is never logged.
package notify

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
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// Event names (Payload.Event).
const (
	EventDone      = "done"
	EventFailed    = "failed"
	EventCancelled = "cancelled"
	EventStalled   = "stalled"
)

// Defaults for Config.
const (
	DefaultPollEvery = 2 * time.Second
	DefaultTimeout   = 10 * time.Second
	DefaultRetries   = 3
	DefaultBackoff   = time.Second
	// queueSize bounds the events waiting for the sender.
	queueSize = 64
	// maxResponse is how much of a response body is read (and then
	// dropped) so that the connection can be reused.
	maxResponse = 64 << 10
)

// Config configures a Notifier. Zero fields take the defaults above.
type Config struct {
	// URL is the webhook (http or https). Empty: the notifier does nothing.
	URL string
	// StallAfter is how long a running campaign may go without a judged
	// task before a stalled event; 0 turns stall events off.
	StallAfter time.Duration
	// PollEvery is how often the store is read (default 2s).
	PollEvery time.Duration
	// Timeout bounds each POST (default 10s).
	Timeout time.Duration
	// Retries is how many times a failed POST is tried again (default 3;
	// negative: none). Backoff is the first wait (default 1s), doubled
	// after each try.
	Retries int
	Backoff time.Duration
	// Client sends the requests; nil uses a client of its own.
	Client *http.Client
	// Log receives delivery failures and dropped events; nil discards.
	Log *slog.Logger
}

// Defaults fills zero fields with their defaults.
func (c *Config) Defaults() {
	if c.PollEvery == 0 {
		c.PollEvery = DefaultPollEvery
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Retries == 0 {
		c.Retries = DefaultRetries
	}
	if c.Retries < 0 {
		c.Retries = 0
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Validate checks a config with defaults applied. Its errors never quote
// the URL.
func (c Config) Validate() error {
	var errs []error
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		switch {
		case err != nil:
			errs = append(errs, errors.New("webhook URL does not parse"))
		case u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, errors.New("webhook URL must be http or https"))
		case u.Host == "":
			errs = append(errs, errors.New("webhook URL has no host"))
		}
	}
	if c.StallAfter < 0 {
		errs = append(errs, errors.New("stall time must be >= 0"))
	}
	if c.PollEvery <= 0 || c.Timeout <= 0 || c.Backoff <= 0 {
		errs = append(errs, errors.New("poll interval, timeout and backoff must be > 0"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("notify config: %w", err)
	}
	return nil
}

// Payload is the JSON body of every webhook call.
type Payload struct {
	Event    string    `json:"event"`
	Campaign string    `json:"campaign"` // campaign id
	Name     string    `json:"name"`
	Lane     string    `json:"lane"`
	State    string    `json:"state"`
	Counts   Counts    `json:"counts"`
	Note     string    `json:"note,omitempty"` // why it failed, stalled, was cancelled...
	Time     time.Time `json:"time"`
	// Text is a one-line summary, for chat webhooks (Slack, Mattermost)
	// that show a "text" field.
	Text string `json:"text"`
}

// Counts are a campaign's task counts (as in the HTTP API) and tokens.
type Counts struct {
	Tasks  int `json:"tasks"`
	Queued int `json:"queued"`
	Leased int `json:"leased"`
	Done   int `json:"done"`
	// Pass counts complete passes only; Pending (stages left for another
	// host) and TaskFaults (the task's own reference failed) are neither
	// a pass nor a fail.
	Pass       int   `json:"pass"`
	Fail       int   `json:"fail"`
	Pending    int   `json:"pending"`
	TaskFaults int   `json:"task_faults"`
	Tokens     int64 `json:"tokens"` // prompt + completion
}

// Store is what the notifier reads (*runs.Store is one).
type Store interface {
	ListCampaigns(ctx context.Context) ([]runs.Campaign, error)
	Counts(ctx context.Context, campaignID string, round int) (runs.Counts, error)
}

var _ Store = (*runs.Store)(nil)

// Notifier watches a store and calls the webhook. Create it with New, then
// Start and Stop it.
type Notifier struct {
	cfg Config
	st  Store
	log *slog.Logger

	// watched campaigns, by id; owned by the poll goroutine once started.
	seen map[string]*watch

	events chan Payload
	quit   chan struct{} // closed by Stop: poll once more, then end
	// sendCtx ends in-flight deliveries when Stop's context ends.
	sendCtx    context.Context
	cancelSend context.CancelFunc

	mu    sync.Mutex
	state int           // 0 new, 1 started, 2 stopped
	done  chan struct{} // closed when the goroutines have ended
}

// watch is what the notifier last saw of one campaign.
type watch struct {
	state runs.CampaignState
	done  int       // judged tasks
	since time.Time // when done last changed (or the campaign was first seen running)
	stall bool      // a stalled event was sent for the current stall
}

// New checks cfg (after applying defaults) and builds a notifier over st.
func New(cfg Config, st Store) (*Notifier, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errors.New("notify: nil store")
	}
	return &Notifier{cfg: cfg, st: st, log: cfg.Log, seen: map[string]*watch{}}, nil
}

// Enabled reports whether a webhook is configured.
func (n *Notifier) Enabled() bool { return n.cfg.URL != "" }

// Start reads the campaigns once (the baseline: no event for what already
// happened) and starts watching in the background. Without a URL it starts
// nothing. A notifier starts once.
func (n *Notifier) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch n.state {
	case 1:
		return errors.New("notify: already started")
	case 2:
		return errors.New("notify: stopped")
	}
	n.state = 1
	n.done = make(chan struct{})
	if !n.Enabled() {
		close(n.done)
		return nil
	}
	camps, err := n.st.ListCampaigns(ctx)
	if err != nil {
		n.state = 2
		close(n.done)
		return fmt.Errorf("notify: start: %w", err)
	}
	now := time.Now()
	for _, c := range camps {
		w := &watch{state: c.State, since: now}
		if c.State == runs.CampaignRunning {
			if cnt, err := n.st.Counts(ctx, c.ID, -1); err == nil {
				w.done = cnt.Done
			}
		}
		n.seen[c.ID] = w
	}
	n.events = make(chan Payload, queueSize)
	n.quit = make(chan struct{})
	n.sendCtx, n.cancelSend = context.WithCancel(context.WithoutCancel(ctx))
	polled, sent := make(chan struct{}), make(chan struct{})
	go n.pollLoop(polled)
	go n.sendLoop(sent)
	go func() {
		<-polled
		<-sent
		n.cancelSend()
		close(n.done)
	}()
	return nil
}

// Stop stops watching after one last look at the store, then lets the
// queued events go out until ctx ends, when deliveries in flight are
// abandoned. It waits for the notifier's goroutines and is idempotent (a
// second call, or a call before Start, returns nil at once).
func (n *Notifier) Stop(ctx context.Context) error {
	n.mu.Lock()
	prev := n.state
	n.state = 2
	n.mu.Unlock()
	if prev != 1 {
		return nil
	}
	if n.quit != nil {
		close(n.quit)
	}
	select {
	case <-n.done:
		return nil
	case <-ctx.Done():
	}
	if n.cancelSend != nil {
		n.cancelSend()
	}
	<-n.done
	return nil
}

// pollLoop reads the store every PollEvery until quit, polls once more and
// closes the event queue.
func (n *Notifier) pollLoop(stopped chan<- struct{}) {
	defer close(stopped)
	defer close(n.events)
	t := time.NewTicker(n.cfg.PollEvery)
	defer t.Stop()
	for {
		select {
		case <-n.quit:
			n.poll()
			return
		case <-t.C:
			n.poll()
		}
	}
}

// poll compares the store with what was seen and queues the events.
func (n *Notifier) poll() {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.PollEvery+n.cfg.Timeout)
	defer cancel()
	camps, err := n.st.ListCampaigns(ctx)
	if err != nil {
		n.log.Warn("notify: list campaigns", "err", err)
		return
	}
	now := time.Now()
	for _, c := range camps {
		w := n.seen[c.ID]
		if w == nil {
			// Created since the last poll (its state may be final already).
			w = &watch{since: now}
			n.seen[c.ID] = w
		}
		changed := w.state != c.State
		w.state = c.State
		switch c.State {
		case runs.CampaignDone, runs.CampaignFailed, runs.CampaignCancelled:
			if changed {
				n.emit(ctx, c, string(c.State), c.Note, now)
			}
		case runs.CampaignRunning:
			n.checkStall(ctx, c, w, changed, now)
		}
	}
}

// checkStall queues a stalled event for a running campaign whose judged
// task count has not moved for StallAfter, once per stall.
func (n *Notifier) checkStall(ctx context.Context, c runs.Campaign, w *watch, changed bool, now time.Time) {
	if n.cfg.StallAfter <= 0 {
		return
	}
	cnt, err := n.st.Counts(ctx, c.ID, -1)
	if err != nil {
		n.log.Warn("notify: count tasks", "run", c.ID, "err", err)
		return
	}
	if changed || cnt.Done != w.done {
		w.done, w.since, w.stall = cnt.Done, now, false
		return
	}
	if w.stall || now.Sub(w.since) < n.cfg.StallAfter {
		return
	}
	w.stall = true
	note := fmt.Sprintf("no task judged for %s", now.Sub(w.since).Round(time.Second))
	n.queue(payload(c, EventStalled, note, cnt, now))
}

// emit queues a state event with the campaign's counts.
func (n *Notifier) emit(ctx context.Context, c runs.Campaign, event, note string, now time.Time) {
	cnt, err := n.st.Counts(ctx, c.ID, -1)
	if err != nil {
		n.log.Warn("notify: count tasks", "run", c.ID, "err", err)
	}
	n.queue(payload(c, event, note, cnt, now))
}

func payload(c runs.Campaign, event, note string, n runs.Counts, now time.Time) Payload {
	p := Payload{Event: event, Campaign: c.ID, Name: c.Name, Lane: c.Lane, State: string(c.State), Note: note,
		Time: now.UTC(), Counts: Counts{Tasks: n.Tasks, Queued: n.Queued, Leased: n.Leased, Done: n.Done,
			Pass: n.Pass, Fail: n.Fail, Pending: n.Pending, TaskFaults: n.TaskFaults, Tokens: n.PromptTokens + n.CompletionTokens}}
	p.Text = fmt.Sprintf("kiln: campaign %s (%s, %s) %s: %d/%d tasks judged, %d pass, %d fail, %d pending",
		c.Name, c.Lane, c.ID, event, n.Done, n.Tasks, n.Pass, n.Fail, n.Pending)
	if n.TaskFaults > 0 {
		p.Text += fmt.Sprintf(", %d task faults", n.TaskFaults)
	}
	if note != "" {
		p.Text += " (" + note + ")"
	}
	return p
}

// queue hands p to the sender without waiting: a full queue drops it.
func (n *Notifier) queue(p Payload) {
	select {
	case n.events <- p:
	default:
		n.log.Warn("notify: event queue full, event dropped", "event", p.Event, "run", p.Campaign)
	}
}

// sendLoop delivers queued events until the queue is closed and empty.
func (n *Notifier) sendLoop(stopped chan<- struct{}) {
	defer close(stopped)
	for p := range n.events {
		n.deliver(n.sendCtx, p)
	}
}

// deliver POSTs p, retrying with backoff; failures are logged.
func (n *Notifier) deliver(ctx context.Context, p Payload) {
	body, err := json.Marshal(p)
	if err != nil {
		n.log.Error("notify: encode event", "event", p.Event, "run", p.Campaign, "err", err)
		return
	}
	wait := n.cfg.Backoff
	for try := 1; ; try++ {
		err := n.post(ctx, body)
		if err == nil {
			n.log.Info("notify: webhook called", "event", p.Event, "run", p.Campaign, "tries", try)
			return
		}
		var perm permanentError
		if errors.As(err, &perm) || try > n.cfg.Retries || ctx.Err() != nil {
			n.log.Warn("notify: webhook call failed", "event", p.Event, "run", p.Campaign, "tries", try, "err", err)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			n.log.Warn("notify: webhook call abandoned at stop", "event", p.Event, "run", p.Campaign, "tries", try, "err", err)
			return
		}
		wait *= 2
	}
}

// permanentError is a failure that a retry would not change: a 4xx
// answer other than 408 and 429, or a request that cannot be built.
type permanentError struct{ msg string }

func (e permanentError) Error() string { return e.msg }

// post sends one request. Its errors name the status, never the URL.
func (n *Notifier) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return permanentError{msg: "webhook request cannot be built"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kiln-notify")
	resp, err := n.cfg.Client.Do(req)
	if err != nil {
		// *url.Error quotes the URL: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("post webhook: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	return permanentError{msg: fmt.Sprintf("webhook answered %d", resp.StatusCode)}
}
