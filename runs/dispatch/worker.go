package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Host is what a worker's complete jobs use of its host.
type Host struct {
	// Open opens lane with the sandbox limits of the job's campaign.
	Open func(ctx context.Context, lane string, lim sandboxes.Limits) (tools.Lane, error)
	// Toolchain and Policy are the toolchain versions and the isolation
	// summary recorded in every verdict.
	Toolchain func() map[string]string
	Policy    func() string
}

// CompleteHandler runs complete jobs (CompleteJobKind) on a worker with
// lanes opened on its host (once per lane and sandbox limits): what `kiln
// rescore --pending` does, for one attempt.
func CompleteHandler(h Host) jobs.Handler {
	var mu sync.Mutex
	type key struct {
		lane string
		lim  sandboxes.Limits
	}
	opened := map[key]tools.Lane{}
	return func(ctx context.Context, j jobs.Job, art *jobs.Artifacts) (json.RawMessage, error) {
		var cj engine.CompleteJob
		if err := json.Unmarshal(j.Payload, &cj); err != nil {
			return nil, jobs.Permanent(fmt.Errorf("complete job: %w", err))
		}
		mu.Lock()
		lane, ok := opened[key{cj.Lane, cj.Limits}]
		if !ok {
			var err error
			if lane, err = h.Open(ctx, cj.Lane, cj.Limits); err != nil {
				mu.Unlock()
				return nil, jobs.Permanent(fmt.Errorf("complete job: open lane %s: %w", cj.Lane, err))
			}
			opened[key{cj.Lane, cj.Limits}] = lane
		}
		mu.Unlock()
		out, err := engine.RunCompletion(ctx, lane, cj, art, h.Toolchain())
		if err != nil {
			return nil, err
		}
		out.Policy = h.Policy()
		return json.Marshal(out)
	}
}

// The test and benchmark job kinds (kiln worker --test-kinds).
const (
	// SleepJobKind sleeps for the payload's ms: a job of fixed duration
	// for the kill test and the throughput benchmark.
	SleepJobKind = "sleep"
	// ExitJobKind makes the worker process exit at once, every time: the
	// poison job of the dead-letter test.
	ExitJobKind = "exit"
)

// SleepPayload is a sleep job's payload.
type SleepPayload struct {
	MS int `json:"ms"`
}

// TestHandlers are the handlers of the test and benchmark job kinds:
// never on a production host.
func TestHandlers() map[string]jobs.Handler {
	return map[string]jobs.Handler{SleepJobKind: sleepJob, ExitJobKind: exitJob}
}

// SleepJobMark starts the lines a sleep job writes to stderr when it
// starts and ends ("start ID", "end ID"), so that a test can tell a busy
// worker process from an idle one.
const SleepJobMark = "kiln-test sleep job "

func sleepJob(ctx context.Context, j jobs.Job, _ *jobs.Artifacts) (json.RawMessage, error) {
	var p SleepPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return nil, jobs.Permanent(fmt.Errorf("sleep job: %w", err))
	}
	fmt.Fprintln(os.Stderr, SleepJobMark+"start", j.ID)
	defer fmt.Fprintln(os.Stderr, SleepJobMark+"end", j.ID)
	t := time.NewTimer(time.Duration(p.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.Marshal(map[string]any{"slept_ms": p.MS, "pid": os.Getpid()})
}

func exitJob(context.Context, jobs.Job, *jobs.Artifacts) (json.RawMessage, error) {
	os.Exit(9)
	return nil, nil
}

// HostInfo is what kiln worker advertises of its host: the GPUs, the
// toolchains found, and the lanes whose pending stages it can complete (a
// capability it offers, every toolchain the lane needs present). A
// capability no lane on this host can serve is logged: its jobs would fail
// on every delivery.
func HostInfo(toolchains func() (*toolchain.Registry, error), lanes func() (*kit.Registry, error), caps []string, log *slog.Logger) jobs.HostInfo {
	var info jobs.HostInfo
	reg, err := toolchains()
	if err != nil {
		log.Warn("worker: toolchains not probed; heartbeats advertise none", "err", err)
		return info
	}
	g := reg.GPU()
	info.GPUs, info.Driver, info.Toolchains = g.Names, g.Driver, reg.Versions()
	kits, err := lanes()
	if err != nil {
		log.Warn("worker: lanes", "err", err)
		return info
	}
	var ks []*kit.Kit
	for _, name := range kits.Names() {
		if k, ok := kits.Get(name); ok {
			ks = append(ks, k)
		}
	}
	info.Lanes = servedLanes(ks, caps, reg)
	for _, c := range caps {
		if c == "gpu" && !g.Present {
			log.Warn("worker: offers capability gpu, but this host has no NVIDIA GPU: its jobs will fail", "capability", c)
		}
	}
	return info
}

// servedLanes are the lanes of kits whose capability is in caps and whose
// toolchains reg has, sorted.
func servedLanes(kits []*kit.Kit, caps []string, reg *toolchain.Registry) []string {
	var out []string
	for _, k := range kits {
		if k.Capability == "" || !slices.Contains(caps, k.Capability) {
			continue
		}
		ok := true
		for _, t := range k.Toolchains {
			if _, found := reg.Get(t); !found {
				ok = false
			}
		}
		if ok {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}
