package main

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
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/kit"
)

// storeRecords is kit.RecordReader over the run database of a data
// folder. It opens the store on first use (never creating one) and keeps
// it open until close: the daemon and kiln run have their own handle
// open too, which SQLite in WAL mode takes.
type storeRecords struct {
	data string

	mu sync.Mutex
	st *runs.Store
}

var _ kit.RecordReader = (*storeRecords)(nil)

// store returns the open store of r's data folder, which must hold a run
// database.
func (r *storeRecords) store(ctx context.Context) (*runs.Store, error) {
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

// close closes the store if it was opened.
func (r *storeRecords) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st == nil {
		return nil
	}
	err := r.st.Close()
	r.st = nil
	return err
}

// VerifiedRecords returns campaign's verified records: each done task
// whose judged attempt's latest verdict revision passed with no stage left
// pending and no suspicion, in claim order.
func (r *storeRecords) VerifiedRecords(ctx context.Context, campaign string) (kit.RecordSet, error) {
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
func (r *storeRecords) Artifact(ctx context.Context, hash string) ([]byte, error) {
	st, err := r.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Blobs().Get(hash)
}

// tasks is sp's tasks section as k's Source reads it: with
// tasks.from_campaign, the named campaign's verified records are read
// from the data folder's store (lanes without RecordLanes refuse the
// field; a campaign of another lane, or without a verified record, is an
// error naming it).
func (w *wiring) tasks(ctx context.Context, sp *spec.Spec, k *kit.Kit) (kit.Tasks, error) {
	t := kitTasks(sp)
	if t.FromCampaign == "" {
		return t, nil
	}
	const field = "tasks.from_campaign"
	if len(k.RecordLanes) == 0 {
		return kit.Tasks{}, fmt.Errorf("%s: lane %s takes no records (lanes that do: %s)", field, k.Name, strings.Join(recordLanes(reg0(w)), ", "))
	}
	set, err := w.records().VerifiedRecords(ctx, t.FromCampaign)
	if err != nil {
		return kit.Tasks{}, fmt.Errorf("%s: %w", field, err)
	}
	if err := set.Check(field, k.Name, k.RecordLanes); err != nil {
		return kit.Tasks{}, err
	}
	t.Records = set.Records
	return t, nil
}

// records is the record reader of w's data folder (the one the user named,
// for lane commands that run with a scratch data folder), made on first
// use; w.close closes its store.
func (w *wiring) records() *storeRecords {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recs == nil {
		data := w.data
		if w.recordData != "" {
			data = w.recordData
		}
		w.recs = &storeRecords{data: data}
	}
	return w.recs
}

// recordLanes lists the lanes of reg that take records.
func recordLanes(reg *kit.Registry) []string {
	var out []string
	if reg != nil {
		for _, name := range reg.Names() {
			if k, _ := reg.Get(name); len(k.RecordLanes) > 0 {
				out = append(out, name+" (of "+strings.Join(k.RecordLanes, ", ")+")")
			}
		}
	}
	if len(out) == 0 {
		out = append(out, "none")
	}
	return out
}
