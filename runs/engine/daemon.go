package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
)

// Daemon runs many campaigns in one process for "kiln serve" and implements
// the HTTP API's Service. Campaigns left queued or running by a previous
// process are resumed by Start.
type Daemon struct {
	Engine *Engine
	// Prepare checks a submitted spec and returns the campaign to create
	// (name, lane, spec, spec folder). An error caused by the spec must be
	// an *api.BadSpec.
	Prepare func(specYAML []byte) (runs.Campaign, error)
	// Plan builds the plan of a stored campaign. When the campaign's run
	// ends, the daemon closes the plan's lane if it is an io.Closer (lanes
	// with GPU slots stop reporting them).
	Plan func(ctx context.Context, c runs.Campaign) (*Plan, error)
	Log  *slog.Logger
	// PollEvery is how often Watch reads progress (default 1s).
	PollEvery time.Duration

	mu      sync.Mutex
	jobs    map[string]*job
	base    context.Context
	stopped bool
	wg      sync.WaitGroup
}

type job struct {
	cancel    context.CancelFunc
	soft      chan struct{}
	softOnce  sync.Once
	cancelled bool // the user cancelled it (vs the daemon stopping)
	done      chan struct{}
}

var _ api.Service = (*Daemon)(nil)

// Start resumes unfinished campaigns and returns.
func (d *Daemon) Start(ctx context.Context) error {
	d.mu.Lock()
	if d.jobs == nil {
		d.jobs = map[string]*job{}
	}
	d.base = context.WithoutCancel(ctx)
	d.mu.Unlock()
	camps, err := d.Engine.Store.ListCampaigns(ctx)
	if err != nil {
		return fmt.Errorf("daemon start: %w", err)
	}
	for _, c := range camps {
		if c.State == runs.CampaignQueued || c.State == runs.CampaignRunning {
			d.log().Info("resuming campaign", keyRun, c.ID, "name", c.Name)
			d.launch(c)
		}
	}
	return nil
}

// Stop asks every campaign to finish its in-flight attempts, waits until ctx
// ends, then aborts what is left (those tasks go back to the queue and are
// resumed by the next Start). Idempotent.
func (d *Daemon) Stop(ctx context.Context) error {
	d.mu.Lock()
	d.stopped = true
	for _, j := range d.jobs {
		j.softOnce.Do(func() { close(j.soft) })
	}
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	d.mu.Lock()
	for _, j := range d.jobs {
		j.cancel()
	}
	d.mu.Unlock()
	<-done
	return nil
}

func (d *Daemon) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.New(slog.DiscardHandler)
}

// launch starts campaign c in the background; the caller holds no lock.
func (d *Daemon) launch(c runs.Campaign) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || d.jobs[c.ID] != nil {
		return
	}
	ctx, cancel := context.WithCancel(d.base)
	j := &job{cancel: cancel, soft: make(chan struct{}), done: make(chan struct{})}
	d.jobs[c.ID] = j
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer close(j.done)
		defer cancel()
		log := d.log().With(keyRun, c.ID)
		plan, err := d.Plan(ctx, c)
		if err != nil {
			log.Error("campaign cannot start", "err", err)
			_ = d.Engine.Store.SetCampaignState(context.WithoutCancel(ctx), c.ID, runs.CampaignFailed, err.Error())
		} else {
			if _, err := d.Engine.Run(ctx, c.ID, plan, j.soft); err != nil && !errors.Is(err, ErrStopped) {
				log.Error("campaign ended with an error", "err", err)
			}
			if cl, ok := plan.Lane.(io.Closer); ok {
				if err := cl.Close(); err != nil {
					log.Warn("close lane", "err", err)
				}
			}
		}
		d.mu.Lock()
		cancelled := j.cancelled
		delete(d.jobs, c.ID)
		d.mu.Unlock()
		if cancelled {
			cur, err := d.Engine.Store.Campaign(context.WithoutCancel(ctx), c.ID)
			if err == nil && runs.CanTransition(cur.State, runs.CampaignCancelled) {
				_ = d.Engine.Store.SetCampaignState(context.WithoutCancel(ctx), c.ID, runs.CampaignCancelled, "cancelled by request")
			}
		}
	}()
}

// Submit implements api.Service.
func (d *Daemon) Submit(ctx context.Context, specYAML []byte) (api.CampaignInfo, error) {
	c, err := d.Prepare(specYAML)
	if err != nil {
		return api.CampaignInfo{}, err
	}
	c, err = d.Engine.Store.CreateCampaign(ctx, c)
	if err != nil {
		return api.CampaignInfo{}, fmt.Errorf("submit: %w", err)
	}
	d.launch(c)
	return d.info(ctx, c)
}

// List implements api.Service.
func (d *Daemon) List(ctx context.Context) ([]api.CampaignInfo, error) {
	camps, err := d.Engine.Store.ListCampaigns(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.CampaignInfo, 0, len(camps))
	for _, c := range camps {
		info, err := d.info(ctx, c)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// Show implements api.Service.
func (d *Daemon) Show(ctx context.Context, id string) (api.CampaignInfo, error) {
	c, err := d.campaign(ctx, id)
	if err != nil {
		return api.CampaignInfo{}, err
	}
	return d.info(ctx, c)
}

func (d *Daemon) campaign(ctx context.Context, id string) (runs.Campaign, error) {
	c, err := d.Engine.Store.Campaign(ctx, id)
	if errors.Is(err, runs.ErrNotFound) {
		return c, api.ErrNotFound
	}
	return c, err
}

func (d *Daemon) info(ctx context.Context, c runs.Campaign) (api.CampaignInfo, error) {
	n, err := d.Engine.Store.Counts(ctx, c.ID, -1)
	if err != nil {
		return api.CampaignInfo{}, err
	}
	info := api.CampaignInfo{
		ID: c.ID, Name: c.Name, Lane: c.Lane, State: string(c.State), Round: c.Round,
		Counts: map[string]int{"tasks": n.Tasks, "queued": n.Queued, "leased": n.Leased,
			"done": n.Done, "pass": n.Pass, "fail": n.Fail, "pending": n.Pending, "task_faults": n.TaskFaults},
		Tokens:    n.PromptTokens + n.CompletionTokens,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
	switch c.State {
	case runs.CampaignDone, runs.CampaignCancelled, runs.CampaignFailed:
		info.FinishedAt = c.UpdatedAt
	}
	if c.State == runs.CampaignFailed {
		info.Error = c.Note
	}
	return info, nil
}

// Cancel implements api.Service: a running campaign's in-flight attempts are
// aborted (their tasks are not judged) and it ends as cancelled.
func (d *Daemon) Cancel(ctx context.Context, id string) error {
	c, err := d.campaign(ctx, id)
	if err != nil {
		return err
	}
	d.mu.Lock()
	j := d.jobs[c.ID]
	if j != nil {
		j.cancelled = true
		j.cancel()
	}
	d.mu.Unlock()
	if j != nil {
		select {
		case <-j.done:
		case <-ctx.Done():
		}
		return nil
	}
	if !runs.CanTransition(c.State, runs.CampaignCancelled) {
		return fmt.Errorf("campaign %s is %s: %w", c.ID, c.State, api.ErrConflict)
	}
	return d.Engine.Store.SetCampaignState(ctx, c.ID, runs.CampaignCancelled, "cancelled by request")
}

// Watch implements api.Service by reading the store about once a second.
func (d *Daemon) Watch(ctx context.Context, id string) (<-chan api.Progress, error) {
	c, err := d.campaign(ctx, id)
	if err != nil {
		return nil, err
	}
	every := d.PollEvery
	if every <= 0 {
		every = time.Second
	}
	ch := make(chan api.Progress)
	go func() {
		defer close(ch)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			cur, err := d.Engine.Store.Campaign(ctx, c.ID)
			if err != nil {
				return
			}
			n, err := d.Engine.Store.Counts(ctx, c.ID, -1)
			if err != nil {
				return
			}
			p := api.Progress{Time: time.Now().UTC(), State: string(cur.State), Round: cur.Round,
				Done: n.Done, Total: n.Tasks, Pass: n.Pass, Fail: n.Fail, Pending: n.Pending, TaskFaults: n.TaskFaults,
				Tokens: n.PromptTokens + n.CompletionTokens, Message: cur.Note}
			select {
			case ch <- p:
			case <-ctx.Done():
				return
			}
			switch cur.State {
			case runs.CampaignDone, runs.CampaignCancelled, runs.CampaignFailed:
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}
