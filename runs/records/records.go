// Package records reads the verified records of a campaign from the run
// database of a data folder (kit.RecordReader): what lanes take as tasks
// with tasks.from_campaign, and what lane commands read.
package records

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Reader is kit.RecordReader over the run database of a data folder. It opens the store on first use (never creating one) and keeps
// it open until Close: the daemon and kiln run have their own handle
// open too, which SQLite in WAL mode takes.
type Reader struct {
	data string

	mu sync.Mutex
	st *runs.Store
}

var _ kit.RecordReader = (*Reader)(nil)

// New returns the record reader of the data folder data.
func New(data string) *Reader { return &Reader{data: data} }

// store returns the open store of r's data folder, which must hold a run
// database.
func (r *Reader) store(ctx context.Context) (*runs.Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st != nil {
		return r.st, nil
	}
	if _, err := os.Stat(filepath.Join(r.data, "kiln.db")); err != nil {
		return nil, fmt.Errorf("no run database in %s (--data names the data folder of the campaign)", r.data)
	}
	st, err := runs.Open(ctx, r.data, nil)
	if err != nil {
		return nil, err
	}
	r.st = st
	return st, nil
}

// Close closes the store if it was opened.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st == nil {
		return nil
	}
	err := r.st.Close()
	r.st = nil
	return err
}

// Tasks fills t.Records for tasks.from_campaign: the named campaign's
// verified records, for lane k (a lane without RecordLanes refuses the
// field, naming those of reg that take records; a campaign of another
// lane, or without a verified record, is an error naming it). t without
// from_campaign is returned as it is.
func (r *Reader) Tasks(ctx context.Context, t kit.Tasks, k *kit.Kit, reg *kit.Registry) (kit.Tasks, error) {
	if t.FromCampaign == "" {
		return t, nil
	}
	const field = "tasks.from_campaign"
	if len(k.RecordLanes) == 0 {
		return kit.Tasks{}, fmt.Errorf("%s: lane %s takes no records (lanes that do: %s)", field, k.Name, strings.Join(reg.RecordLanes(), ", "))
	}
	set, err := r.VerifiedRecords(ctx, t.FromCampaign)
	if err != nil {
		return kit.Tasks{}, fmt.Errorf("%s: %w", field, err)
	}
	if err := set.Check(field, k.Name, k.RecordLanes); err != nil {
		return kit.Tasks{}, err
	}
	t.Records = set.Records
	return t, nil
}

// VerifiedRecords returns campaign's verified records: each done task
// whose judged attempt's latest verdict revision passed with no stage left
// pending and no suspicion, in claim order.
func (r *Reader) VerifiedRecords(ctx context.Context, campaign string) (kit.RecordSet, error) {
	st, err := r.store(ctx)
	if err != nil {
		return kit.RecordSet{}, err
	}
	c, err := st.Campaign(ctx, campaign)
	if err != nil {
		if errors.Is(err, runs.ErrNotFound) {
			return kit.RecordSet{}, fmt.Errorf("no campaign %q in %s", campaign, r.data)
		}
		return kit.RecordSet{}, err
	}
	set := kit.RecordSet{Campaign: c.Name, CampaignID: c.ID, Lane: c.Lane}
	err = st.EachResult(ctx, c.ID, -1, func(res runs.Result) error {
		v := res.Verdict
		switch v.Outcome() {
		case runs.OutcomeFail:
			set.Failed++
			return nil
		case runs.OutcomeTaskFault:
			set.TaskFaults++
			return nil
		case runs.OutcomePending:
			set.Pending++
			return nil
		}
		if v.Labels != nil && v.Labels.Suspicion != "" {
			set.Suspect++
			return nil
		}
		rec := kit.Record{Key: res.Task.Key, Campaign: c.Name, CampaignID: c.ID, Lane: c.Lane,
			TaskID: res.Task.ID, AttemptID: res.Attempt.ID, VerdictID: v.ID, Revision: v.Revision,
			Categories: slices.Clone(res.Task.Categories), Meta: res.Task.Meta, Files: res.Task.Files, Answer: res.Attempt.Answer,
			Stage: v.Stage, Measurements: v.Measurements, Artifacts: v.Artifacts}
		if v.Labels != nil {
			rec.Domain = v.Labels.Domain
		}
		set.Records = append(set.Records, rec)
		return nil
	})
	if err != nil {
		return kit.RecordSet{}, fmt.Errorf("read campaign %s: %w", c.ID, err)
	}
	return set, nil
}

// Artifact returns a stored blob.
func (r *Reader) Artifact(ctx context.Context, hash string) ([]byte, error) {
	st, err := r.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Blobs().Get(hash)
}
