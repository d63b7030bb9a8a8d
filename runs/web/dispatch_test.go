package web

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs/jobs"
)

// fakeDispatch is a Dispatch with a fixed status.
type fakeDispatch struct {
	status DispatchStatus
	err    error
}

func (f fakeDispatch) DispatchStatus(context.Context) (DispatchStatus, error) { return f.status, f.err }

var _ Dispatch = fakeDispatch{}

// TestWorkersPage: /workers without dispatch says it is off and how to turn
// it on; with dispatch it shows the workers, each capability's jobs, the
// job results, the failed jobs' retries and the latest failures, escaped.
func TestWorkersPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)

	off := f.get(t, "/workers", 200)
	mustContain(t, "workers page without dispatch", off, `id="dispatch-off"`, "Dispatch is off", "kiln serve --dispatch",
		"kiln worker --nats URL", `id="nav-workers"`)
	if strings.Contains(off, `id="queues"`) {
		t.Error("the page without dispatch shows a queue")
	}

	now := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	st := DispatchStatus{URL: "nats://127.0.0.1:4222", RetryAfter: 5 * time.Minute, MaxRetries: 3,
		Workers: []jobs.WorkerInfo{
			{ID: "gpu-1", Host: "h100-a", Capabilities: []string{"gpu"}, Running: 1, Done: 41, LastSeen: now.Add(-2 * time.Second),
				Started: now.Add(-3 * time.Hour), Interval: 2 * time.Second,
				HostInfo: jobs.HostInfo{GPUs: []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"}, Driver: "580.159.04",
					Lanes: []string{"cuda-synth", "ptx2cuda"}}},
			{ID: "amd-1", Host: "mi300", Capabilities: []string{"amd", "torch"}, Draining: true, LastSeen: now.Add(-9 * time.Second),
				Stale: true, Interval: 2 * time.Second},
		},
		Queues:  []jobs.CapabilityStats{{Capability: "gpu", Waiting: 7, InFlight: 1, Redelivered: 1, Pulls: 1, Dead: 2}},
		Results: JobCounts{Done: 41, Failed: 3, Dead: 2, RetriesWaiting: 1, RetriesExhausted: 1},
		Retries: []Retry{
			{Campaign: "c1", TaskKey: "r0/k1#0", AttemptID: "a1", VerdictID: "v1", Capability: "gpu", Tries: 1, State: RetryWaiting,
				NextJob: "complete-v1-try2", NextAt: now.Add(4 * time.Minute), LastJob: "complete-v1", LastStatus: "failed",
				LastWorker: "gpu-1", LastReason: "no NVIDIA GPU <visible>", LastAt: now.Add(-time.Minute)},
			{Campaign: "c1", TaskKey: "r0/k2#0", AttemptID: "a2", VerdictID: "v2", Capability: "gpu", Tries: 4, State: RetryExhausted,
				LastJob: "complete-v2-try4", LastStatus: "dead", LastReason: "dead letter: delivered 5 times", LastAt: now.Add(-time.Hour)},
		},
		Failures: []JobFailure{{JobID: "complete-v2-try4", Kind: "complete", Status: "dead", Deliveries: 5,
			Reason: "dead letter: delivered 5 times", At: now.Add(-time.Hour)}},
	}
	h, err := New(Config{Store: f.st, Service: f.d, Dispatch: fakeDispatch{status: st}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	on := (&fixture{srv: srv}).get(t, "/workers", 200)
	mustContain(t, "workers page", on, "nats://127.0.0.1:4222", "sent again up to 3 times, 5m after the failure",
		`data-worker="gpu-1"`, "h100-a", "2 x NVIDIA H100 80GB HBM3 (driver 580.159.04)", "cuda-synth, ptx2cuda", "2s ago", "3h ago", `data-worker="amd-1"`, "amd, torch", ">stale<",
		`data-capability="gpu"`, `<td class="n">7</td>`, "done 41", "failed 3", "dead 2", "retries waiting 1", "retries exhausted 1",
		`data-verdict="v1" data-state="waiting"`, "in 4m", "complete-v1-try2", "no NVIDIA GPU &lt;visible&gt;", "on gpu-1",
		`data-verdict="v2" data-state="exhausted"`, "none left", "kiln rescore --pending c1", `href="/attempts/a1"`,
		`id="failures"`, "complete-v2-try4")
	if strings.Contains(on, "<visible>") || strings.Contains(on, "dispatch-off") || strings.Contains(on, "style=") {
		t.Error("unescaped reason, the off notice, or an inline style on the page")
	}

	h2, err := New(Config{Store: f.st, Service: f.d, Dispatch: fakeDispatch{err: errors.New("store closed")}})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h2)
	t.Cleanup(srv2.Close)
	mustContain(t, "failing status", (&fixture{srv: srv2}).get(t, "/workers", 500), "store closed")
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{-time.Second: "0s", 850 * time.Millisecond: "850ms", 12 * time.Second: "12s",
		4*time.Minute + 10*time.Second: "4m10s", 5 * time.Minute: "5m", 3*time.Hour + 5*time.Minute: "3h5m", 2 * time.Hour: "2h"} {
		if got := short(d); got != want {
			t.Errorf("short(%s) = %q, want %q", d, got, want)
		}
	}
}
