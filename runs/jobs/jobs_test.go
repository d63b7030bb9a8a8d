package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/jobs"
)

// fixture is a daemon side: embedded server, queue, collector storing
// into a real runs store.
type fixture struct {
	srv   *jobs.Server
	nc    *nats.Conn
	q     *jobs.Queue
	col   *jobs.Collector
	st    *runs.Store
	seed  string // a worker's nkey seed file
	dupes atomic.Int64
}

func newFixture(t *testing.T, qc jobs.QueueConfig) *fixture {
	t.Helper()
	return newFixtureWith(t, qc, nil)
}

// newFixtureWith is newFixture with the collector's StoreFunc wrapped by
// wrap (when not nil).
func newFixtureWith(t *testing.T, qc jobs.QueueConfig, wrap func(jobs.StoreFunc) jobs.StoreFunc) *fixture {
	t.Helper()
	dir := t.TempDir()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	f := &fixture{seed: filepath.Join(dir, "worker.nk")}
	if err := os.WriteFile(f.seed, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	f.srv, err = jobs.StartServer(jobs.ServerConfig{StoreDir: filepath.Join(dir, "nats"), WorkerNKeys: []string{pub}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.srv.Stop)
	f.nc, err = jobs.Connect(jobs.ConnConfig{URL: f.srv.URL(), Name: "daemon", Options: f.srv.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.nc.Close)
	ctx := context.Background()
	if f.q, err = jobs.NewQueue(ctx, f.nc, qc); err != nil {
		t.Fatal(err)
	}
	if f.st, err = runs.Open(ctx, filepath.Join(dir, "data"), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.st.Close() })
	var store jobs.StoreFunc = func(ctx context.Context, r jobs.Result) error {
		jr := runs.JobResult{JobID: r.JobID, Kind: r.Kind, Status: runs.JobDone, Worker: r.Worker,
			Reason: r.Error, Deliveries: r.Deliveries, Result: r.Payload}
		switch {
		case r.Dead:
			jr.Status = runs.JobDead
		case !r.OK:
			jr.Status = runs.JobFailed
		}
		ok, err := f.st.RecordJob(ctx, jr)
		if err == nil && !ok {
			f.dupes.Add(1)
		}
		return err
	}
	if wrap != nil {
		store = wrap(store)
	}
	f.col = jobs.NewCollector(f.q, f.nc, store, nil)
	if err := f.col.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.col.Stop(context.Background()) })
	return f
}

// worker starts an in-process worker that authenticates with the nkey.
func (f *fixture) worker(t *testing.T, id string, handlers map[string]jobs.Handler) *jobs.Worker {
	t.Helper()
	nc, err := jobs.Connect(jobs.ConnConfig{URL: f.srv.URL(), Name: id, NKeySeedFile: f.seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w, err := jobs.NewWorker(nc, jobs.WorkerConfig{ID: id, Capabilities: []string{"test"}, Handlers: handlers,
		Heartbeat: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop(context.Background()) })
	return w
}

func (f *fixture) waitResults(t *testing.T, n int, within time.Duration) []runs.JobResult {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		rs, err := f.st.JobResults(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) >= n || time.Now().After(deadline) {
			return rs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sleepHandler(ctx context.Context, j jobs.Job, _ *jobs.Artifacts) (json.RawMessage, error) {
	var p struct{ MS int }
	_ = json.Unmarshal(j.Payload, &p)
	select {
	case <-time.After(time.Duration(p.MS) * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.RawMessage(`{"slept":true}`), nil
}

func TestRoundTripDedupAndWorkers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobs.QueueConfig{AckWait: time.Second})
	ctx := context.Background()
	if err := f.q.EnsureCapability(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	f.worker(t, "w1", map[string]jobs.Handler{"sleep": sleepHandler})
	f.worker(t, "w2", map[string]jobs.Handler{"sleep": sleepHandler})
	const n = 20
	for i := range n {
		fresh, err := f.q.Publish(ctx, jobs.Job{ID: fmt.Sprintf("s-%d", i), Kind: "sleep", Capability: "test",
			Payload: json.RawMessage(`{"MS":50}`)})
		if err != nil || !fresh {
			t.Fatalf("publish %d: fresh %v err %v", i, fresh, err)
		}
	}
	// The same job again: JetStream drops it.
	if fresh, err := f.q.Publish(ctx, jobs.Job{ID: "s-3", Kind: "sleep", Capability: "test"}); err != nil || fresh {
		t.Fatalf("duplicate publish: fresh %v err %v", fresh, err)
	}
	rs := f.waitResults(t, n, 30*time.Second)
	if len(rs) != n {
		t.Fatalf("%d results, want %d", len(rs), n)
	}
	by := map[string]int{}
	for _, r := range rs {
		if r.Status != runs.JobDone || string(r.Result) != `{"slept":true}` {
			t.Errorf("result %+v", r)
		}
		by[r.Worker]++
	}
	if by["w1"] == 0 || by["w2"] == 0 {
		t.Errorf("work not shared: %v", by)
	}
	ws := f.col.Workers()
	if len(ws) != 2 || ws[0].ID != "w1" || ws[0].Capabilities[0] != "test" {
		t.Errorf("workers %+v", ws)
	}
	// A result published again (a worker that died after publishing)
	// does not make a second record.
	if ok, err := f.st.RecordJob(ctx, runs.JobResult{JobID: "s-1", Kind: "sleep", Status: runs.JobDone}); err != nil || ok {
		t.Errorf("second record: %v %v", ok, err)
	}
}

// A job whose worker vanished (delivered, never acked) is redelivered
// after AckWait and done by a live worker.
func TestRedeliveryAfterDeadWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobs.QueueConfig{AckWait: 500 * time.Millisecond})
	ctx := context.Background()
	if _, err := f.q.Publish(ctx, jobs.Job{ID: "lost", Kind: "sleep", Capability: "test"}); err != nil {
		t.Fatal(err)
	}
	cons, err := f.q.JetStream().Consumer(ctx, jobs.JobsStream, jobs.ConsumerName("test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil { // taken, never acked
		t.Fatal(err)
	}
	f.worker(t, "live", map[string]jobs.Handler{"sleep": sleepHandler})
	rs := f.waitResults(t, 1, 20*time.Second)
	if len(rs) != 1 || rs[0].Worker != "live" || rs[0].Deliveries != 2 {
		t.Fatalf("results %+v", rs)
	}
}

// A job never acked MaxDeliver times is dead-lettered: recorded as dead
// with its reason, copied to kiln.dead.<capability>, gone from the queue.
func TestDeadLetter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobs.QueueConfig{AckWait: 300 * time.Millisecond, MaxDeliver: 2})
	ctx := context.Background()
	if _, err := f.q.Publish(ctx, jobs.Job{ID: "poison", Kind: "sleep", Capability: "test"}); err != nil {
		t.Fatal(err)
	}
	cons, err := f.q.JetStream().Consumer(ctx, jobs.JobsStream, jobs.ConsumerName("test"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// Workers keep pulling (the server checks MaxDeliver when it would
	// deliver again); nothing more comes.
	if m, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second)); err == nil {
		t.Fatalf("delivered a third time: %s", m.Data())
	}
	rs := f.waitResults(t, 1, 20*time.Second)
	if len(rs) != 1 || rs[0].Status != runs.JobDead || rs[0].Deliveries != 2 || rs[0].Reason == "" {
		t.Fatalf("results %+v", rs)
	}
	dead, err := f.q.JetStream().Stream(ctx, jobs.DeadStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dead.GetLastMsgForSubject(ctx, jobs.DeadPrefix+"test")
	if err != nil || !bytes.Contains(m.Data, []byte(`"poison"`)) {
		t.Fatalf("dead letter: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		js, err := f.q.JetStream().Stream(ctx, jobs.JobsStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := js.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead job still queued: %d messages", info.State.Msgs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A permanent handler error is the job's result; a transient one is
// retried and becomes the result at the last delivery.
func TestFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobs.QueueConfig{AckWait: time.Second, MaxDeliver: 2})
	ctx := context.Background()
	var transient atomic.Int64
	f.worker(t, "w", map[string]jobs.Handler{
		"bad": func(context.Context, jobs.Job, *jobs.Artifacts) (json.RawMessage, error) {
			return nil, jobs.Permanent(errors.New("bad payload"))
		},
		"flaky": func(context.Context, jobs.Job, *jobs.Artifacts) (json.RawMessage, error) {
			transient.Add(1)
			return nil, errors.New("device busy")
		},
	})
	for _, j := range []jobs.Job{{ID: "b", Kind: "bad", Capability: "test"}, {ID: "f", Kind: "flaky", Capability: "test"},
		{ID: "u", Kind: "unknown", Capability: "test"}} {
		if _, err := f.q.Publish(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	rs := f.waitResults(t, 3, 30*time.Second)
	if len(rs) != 3 {
		t.Fatalf("results %+v", rs)
	}
	for _, r := range rs {
		if r.Status != runs.JobFailed || r.Reason == "" {
			t.Errorf("result %+v", r)
		}
		if r.JobID == "f" && (r.Deliveries != 2 || transient.Load() != 2) {
			t.Errorf("flaky: deliveries %d, runs %d", r.Deliveries, transient.Load())
		}
	}
}

func TestArtifacts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobs.QueueConfig{})
	ctx := context.Background()
	big := bytes.Repeat([]byte("kiln"), 3<<20) // 12 MiB: more than a message
	h, err := f.q.Artifacts().Put(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	if h2, err := f.q.Artifacts().Put(ctx, big); err != nil || h2 != h {
		t.Fatalf("second put: %s %v", h2, err)
	}
	got, err := f.q.Artifacts().Get(ctx, h)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("get: %v", err)
	}
	// The same name as the runs blob store gives it.
	bh, err := f.st.Blobs().Put(big)
	if err != nil || bh != h {
		t.Fatalf("blob hash %s, artifact %s (%v)", bh, h, err)
	}
	// A worker (nkey, restricted permissions) reads and writes them too.
	var seen atomic.Bool
	f.worker(t, "w", map[string]jobs.Handler{"art": func(ctx context.Context, j jobs.Job, a *jobs.Artifacts) (json.RawMessage, error) {
		b, err := a.Get(ctx, h)
		if err != nil {
			return nil, err
		}
		nh, err := a.Put(ctx, append(b[:10:10], "!"...))
		if err != nil {
			return nil, err
		}
		seen.Store(true)
		return json.Marshal(nh)
	}})
	if _, err := f.q.Publish(ctx, jobs.Job{ID: "a", Kind: "art", Capability: "test"}); err != nil {
		t.Fatal(err)
	}
	rs := f.waitResults(t, 1, 30*time.Second)
	if len(rs) != 1 || rs[0].Status != runs.JobDone || !seen.Load() {
		t.Fatalf("results %+v", rs)
	}
}

// A worker with the nkey may not publish jobs.
func TestWorkerCannotPublishJobs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobs.QueueConfig{})
	nc, err := jobs.Connect(jobs.ConnConfig{URL: f.srv.URL(), NKeySeedFile: f.seed})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, jobs.JobsPrefix+"test", []byte(`{}`)); err == nil {
		t.Fatal("a worker published a job")
	}
	if _, err := jobs.Connect(jobs.ConnConfig{URL: f.srv.URL()}); err == nil {
		t.Fatal("connected without credentials")
	}
}

// TestCollectorStoreErrors: a result the store refuses for good (a
// permanent error: its verdict is gone) is dead-lettered with the reason
// and never offered again; one it cannot take for now (a transient error)
// is offered again after growing delays, then stored.
func TestCollectorStoreErrors(t *testing.T) {
	t.Parallel()
	var (
		mu        sync.Mutex
		goneCalls int
		busyCalls []time.Time
	)
	f := newFixtureWith(t, jobs.QueueConfig{}, func(next jobs.StoreFunc) jobs.StoreFunc {
		return func(ctx context.Context, r jobs.Result) error {
			mu.Lock()
			defer mu.Unlock()
			switch r.JobID {
			case "gone":
				goneCalls++
				return fmt.Errorf("store complete job: %w", jobs.Permanent(errors.New("attempt a1 has no verdict v1")))
			case "busy":
				busyCalls = append(busyCalls, time.Now())
				if len(busyCalls) <= 2 {
					return errors.New("database is locked (SQLITE_BUSY)")
				}
			}
			return next(ctx, r)
		}
	})
	ctx := context.Background()
	for _, id := range []string{"gone", "busy"} {
		b, _ := json.Marshal(jobs.Result{JobID: id, Kind: "complete", Capability: "test", Worker: "w1", OK: true,
			Deliveries: 1, Payload: json.RawMessage(`{}`)})
		if _, err := f.q.JetStream().Publish(ctx, jobs.ResultsPrefix+"complete", b); err != nil {
			t.Fatal(err)
		}
	}
	rs := f.waitResults(t, 1, 20*time.Second)
	if len(rs) != 1 || rs[0].JobID != "busy" || rs[0].Status != runs.JobDone {
		t.Fatalf("stored %+v, want the busy job's result alone", rs)
	}
	time.Sleep(1500 * time.Millisecond) // a retried "gone" would come back within this
	mu.Lock()
	calls, gone := append([]time.Time(nil), busyCalls...), goneCalls
	mu.Unlock()
	if gone != 1 {
		t.Errorf("permanent store error: offered %d times, want once", gone)
	}
	if len(calls) != 3 {
		t.Fatalf("transient store error: %d calls, want 3 (two failures, then stored)", len(calls))
	}
	d1, d2 := calls[1].Sub(calls[0]), calls[2].Sub(calls[1])
	if d1 < 900*time.Millisecond || d2 < 1800*time.Millisecond || d2 < d1+d1/2 {
		t.Errorf("retry delays %s then %s: want about 1s then 2s", d1, d2)
	}
	dead, err := f.q.JetStream().Stream(ctx, jobs.DeadStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dead.GetLastMsgForSubject(ctx, jobs.DeadPrefix+"test")
	if err != nil {
		t.Fatalf("dead letter of the refused result: %v", err)
	}
	if !bytes.Contains(m.Data, []byte(`"gone"`)) || m.Header.Get(jobs.DeadOfHeader) != "result" ||
		!strings.Contains(m.Header.Get(jobs.DeadReasonHeader), "has no verdict v1") {
		t.Errorf("dead letter %s %v", m.Data, m.Header)
	}
	info, err := f.q.JetStream().Stream(ctx, jobs.ResultsStream)
	if err != nil {
		t.Fatal(err)
	}
	if si, err := info.Info(ctx); err != nil || si.State.Msgs != 0 {
		t.Errorf("results stream after both: %v %+v", err, si.State)
	}
	stats, err := f.q.Stats(ctx)
	if err != nil || len(stats) != 1 || stats[0].Capability != "test" || stats[0].Dead != 1 {
		t.Errorf("queue stats %+v %v", stats, err)
	}
	t.Logf("transient store error retried after %s, then %s", d1.Round(time.Millisecond), d2.Round(time.Millisecond))
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		deliveries uint64
		want       time.Duration
	}{{0, time.Second}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {6, 32 * time.Second},
		{7, time.Minute}, {1000, time.Minute}} {
		if got := jobs.RetryDelay(c.deliveries); got != c.want {
			t.Errorf("RetryDelay(%d) = %s, want %s", c.deliveries, got, c.want)
		}
	}
}
