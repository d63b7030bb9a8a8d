package engine

import (
	"context"
	"fmt"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
)

// Resume restarts a failed campaign in the daemon: it is queued again and
// run from where it stopped (judged tasks stay judged). A campaign that is
// done or cancelled cannot resume, and one the daemon is running already
// is left alone (api.ErrConflict for both).
func (d *Daemon) Resume(ctx context.Context, id string) error {
	c, err := d.campaign(ctx, id)
	if err != nil {
		return err
	}
	d.mu.Lock()
	running := d.jobs[c.ID] != nil
	d.mu.Unlock()
	switch {
	case running:
		return fmt.Errorf("campaign %s is running already: %w", c.ID, api.ErrConflict)
	case c.State == runs.CampaignFailed:
		if err := d.Engine.Store.SetCampaignState(ctx, c.ID, runs.CampaignQueued, "resumed"); err != nil {
			return fmt.Errorf("resume %s: %w", c.ID, err)
		}
		c.State = runs.CampaignQueued
	case c.State == runs.CampaignQueued || c.State == runs.CampaignRunning:
		// Left over by a daemon that stopped: run it.
	default:
		return fmt.Errorf("campaign %s is %s: nothing to resume: %w", c.ID, c.State, api.ErrConflict)
	}
	d.launch(c)
	return nil
}

// Adopt runs a stored campaign that was created outside Submit (a
// refinement fork) in the daemon.
func (d *Daemon) Adopt(c runs.Campaign) { d.launch(c) }
