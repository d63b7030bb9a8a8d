package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs/dispatch"
	"github.com/kiln-dev/kiln/runs/jobs"
)

// TestWorkerQueueBench measures the queue's throughput with 1, 2, 4 and 8
// `kiln worker` processes (concurrency 1 each) running sleep jobs of fixed
// duration, through the daemon side as kiln serve --dispatch runs it
// (embedded NATS with nkey auth, collector storing each result in SQLite),
// and the per-job overhead of one job at a time. It is a measurement, not
// a check: it runs only with KILN_QUEUE_BENCH=1 (results in
// runs/jobs/QUEUE_BENCH.md).
//
//	KILN_QUEUE_BENCH=1 go test ./cmd/kiln -run TestWorkerQueueBench -count=1 -v
//
// KILN_QUEUE_BENCH_MS (default 200) is the job duration and
// KILN_QUEUE_BENCH_PER (default 40) the jobs per worker of a run.
func TestWorkerQueueBench(t *testing.T) {
	if os.Getenv("KILN_QUEUE_BENCH") != "1" {
		t.Skip("a measurement: set KILN_QUEUE_BENCH=1")
	}
	ms, per := envInt(t, "KILN_QUEUE_BENCH_MS", 200), envInt(t, "KILN_QUEUE_BENCH_PER", 40)
	job := time.Duration(ms) * time.Millisecond
	ctx := context.Background()
	payload, _ := json.Marshal(dispatch.SleepPayload{MS: ms})

	// Overhead: one job at a time, one worker: stored - published - job.
	{
		d := startWorkerDaemon(t, jobs.QueueConfig{})
		if err := d.q.EnsureCapability(ctx, "test"); err != nil {
			t.Fatal(err)
		}
		d.worker(t, "solo")
		waitPulling(t, d, 1)
		var over []time.Duration
		for i := range 30 {
			id := fmt.Sprintf("seq-%03d", i)
			t0 := time.Now()
			if _, err := d.q.Publish(ctx, jobs.Job{ID: id, Kind: dispatch.SleepJobKind, Capability: "test", Payload: payload}); err != nil {
				t.Fatal(err)
			}
			rs := d.waitJobs(t, i+1, time.Minute)
			if len(rs) != i+1 {
				t.Fatalf("job %s: no result", id)
			}
			var stored time.Time
			for _, r := range rs {
				if r.JobID == id {
					stored = r.CreatedAt
				}
			}
			over = append(over, stored.Sub(t0)-job)
		}
		slices.Sort(over)
		t.Logf("overhead, one job at a time (%d jobs of %s): median %s, p90 %s, min %s, max %s",
			len(over), job, over[len(over)/2].Round(100*time.Microsecond), over[len(over)*9/10].Round(100*time.Microsecond),
			over[0].Round(100*time.Microsecond), over[len(over)-1].Round(100*time.Microsecond))
	}

	var base float64
	for _, n := range []int{1, 2, 4, 8} {
		d := startWorkerDaemon(t, jobs.QueueConfig{})
		if err := d.q.EnsureCapability(ctx, "test"); err != nil {
			t.Fatal(err)
		}
		var ws []*workerProc
		for i := range n {
			ws = append(ws, d.worker(t, fmt.Sprintf("w%d", i)))
		}
		waitPulling(t, d, n)
		total := per * n
		t0 := time.Now()
		for i := range total {
			if _, err := d.q.Publish(ctx, jobs.Job{ID: fmt.Sprintf("n%d-%04d", n, i), Kind: dispatch.SleepJobKind, Capability: "test", Payload: payload}); err != nil {
				t.Fatal(err)
			}
		}
		published := time.Since(t0)
		rs := d.waitJobs(t, total, 10*time.Minute)
		if len(rs) != total {
			t.Fatalf("%d workers: %d of %d results", n, len(rs), total)
		}
		var last time.Time
		byWorker := map[string]int{}
		for _, r := range rs {
			if r.CreatedAt.After(last) {
				last = r.CreatedAt
			}
			byWorker[r.Worker]++
		}
		wall := last.Sub(t0)
		tput := float64(total) / wall.Seconds()
		if n == 1 {
			base = tput
		}
		slot := time.Duration(float64(n) / tput * float64(time.Second))
		t.Logf("workers %d: %d jobs of %s in %s (published in %s): %.2f jobs/s, ideal %.2f, efficiency %.1f%%, per-job slot time %s (overhead %s), jobs per worker %v",
			n, total, job, wall.Round(time.Millisecond), published.Round(time.Millisecond), tput, float64(n)/job.Seconds(),
			100*tput/(float64(n)*base), slot.Round(100*time.Microsecond), (slot - job).Round(100*time.Microsecond), byWorker)
		for _, w := range ws {
			w.kill()
		}
	}
}

// waitPulling waits until n pull requests wait on the test capability's
// consumer: every worker is bound and idle.
func waitPulling(t *testing.T, d *workerDaemon, n int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := d.q.JetStream().Consumer(ctx, jobs.JobsStream, jobs.ConsumerName("test"))
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumWaiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workers pulling after 1m", info.NumWaiting, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q", name, s)
	}
	return v
}
