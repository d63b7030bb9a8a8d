package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
)

// TestDaemonResume: a campaign that failed to start (its plan could not be
// built) resumes from the dashboard's button once the cause is gone, runs
// to the end, and cannot be resumed again; Adopt runs a stored campaign.
func TestDaemonResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	var broken atomic.Bool
	broken.Store(true)
	d := &Daemon{
		Engine: &Engine{Store: st},
		Prepare: func([]byte) (runs.Campaign, error) {
			return runs.Campaign{Name: "x", Lane: "c2x86"}, nil
		},
		Plan: func(context.Context, runs.Campaign) (*Plan, error) {
			if broken.Load() {
				return nil, errors.New("endpoint unreachable")
			}
			return &Plan{Lane: &closingLane{}, Model: scripted(), ToolMode: agent.ToolsNone, MaxToolCalls: -1,
				Tasks: func() ([]runs.Task, error) { return []runs.Task{{Key: "a", Lane: "c2x86", Prompt: "ans=right"}}, nil }}, nil
		},
	}
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer d.Stop(ctx)
	wait := func(id string, want runs.CampaignState) runs.Campaign {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := st.Campaign(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.State == want {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("campaign %s is %s (%s), want %s", id, c.State, c.Note, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	info, err := d.Submit(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := wait(info.ID, runs.CampaignFailed); c.Note != "endpoint unreachable" {
		t.Errorf("failed with note %q", c.Note)
	}
	broken.Store(false)
	if err := d.Resume(ctx, info.ID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	wait(info.ID, runs.CampaignDone)
	if n, err := st.Counts(ctx, info.ID, -1); err != nil || n.Pass != 1 {
		t.Errorf("after resume: %+v %v", n, err)
	}
	if err := d.Resume(ctx, info.ID); !errors.Is(err, api.ErrConflict) {
		t.Errorf("resuming a done campaign: %v", err)
	}
	if err := d.Resume(ctx, "nope"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("resuming an unknown campaign: %v", err)
	}
	// Adopt: a campaign stored by someone else (a refinement fork) runs.
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: "adopted", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	d.Adopt(c)
	wait(c.ID, runs.CampaignDone)
}
