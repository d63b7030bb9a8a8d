package selftest

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
)

// Stats summarises durations.
type Stats struct {
	Min, Median, P90, Max time.Duration
}

func statsOf(d []time.Duration) Stats {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return Stats{}
	}
	return Stats{Min: s[0], Median: s[len(s)/2], P90: s[len(s)*9/10], Max: s[len(s)-1]}
}

// Overhead compares running a trivial program (true(1)) in the sandbox
// with a bare fork+exec of it from this process.
type Overhead struct {
	Runs    int   `json:"runs"`
	Sandbox Stats `json:"sandbox"`
	Bare    Stats `json:"bare"`
	// Added is the median sandbox run minus the median bare exec: the
	// per-run cost of the isolation layers.
	Added time.Duration `json:"added"`
	// Policy is the Runner's policy string (which layers were in force).
	Policy string `json:"policy"`
}

func (o Overhead) String() string {
	return fmt.Sprintf("%d runs of true(1): sandboxed median %s (p90 %s, min %s), bare exec median %s (p90 %s); added %s per run [policy %s]",
		o.Runs, o.Sandbox.Median.Round(10*time.Microsecond), o.Sandbox.P90.Round(10*time.Microsecond),
		o.Sandbox.Min.Round(10*time.Microsecond), o.Bare.Median.Round(10*time.Microsecond),
		o.Bare.P90.Round(10*time.Microsecond), o.Added.Round(10*time.Microsecond), o.Policy)
}

// MeasureOverhead runs true(1) runs times in one box of r and runs times
// bare, alternating, and returns the distributions (wall time as seen by
// the caller of Box.Run, so everything the sandbox does per run counts).
func MeasureOverhead(ctx context.Context, r *sandboxes.Runner, runs int) (Overhead, error) {
	if runs < 1 {
		runs = 1
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return Overhead{}, fmt.Errorf("overhead: %w", err)
	}
	box, err := r.Open(ctx)
	if err != nil {
		return Overhead{}, fmt.Errorf("overhead: %w", err)
	}
	defer box.Close()
	// One warm-up of each.
	if _, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"true"}}); err != nil {
		return Overhead{}, fmt.Errorf("overhead: %w", err)
	}
	if err := exec.CommandContext(ctx, truePath).Run(); err != nil {
		return Overhead{}, fmt.Errorf("overhead: %w", err)
	}
	sb := make([]time.Duration, 0, runs)
	bare := make([]time.Duration, 0, runs)
	for i := 0; i < runs; i++ {
		start := time.Now()
		res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"true"}})
		if err != nil {
			return Overhead{}, fmt.Errorf("overhead: %w", err)
		}
		if !res.OK() {
			return Overhead{}, fmt.Errorf("overhead: true in the sandbox: %s", res.Describe())
		}
		sb = append(sb, time.Since(start))
		start = time.Now()
		if err := exec.CommandContext(ctx, truePath).Run(); err != nil {
			return Overhead{}, fmt.Errorf("overhead: %w", err)
		}
		bare = append(bare, time.Since(start))
	}
	o := Overhead{Runs: runs, Sandbox: statsOf(sb), Bare: statsOf(bare), Policy: r.Capabilities().Policy}
	o.Added = o.Sandbox.Median - o.Bare.Median
	return o, nil
}
