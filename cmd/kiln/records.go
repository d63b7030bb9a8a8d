package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/runs/records"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/kit"
)

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
		return kit.Tasks{}, fmt.Errorf("%s: lane %s takes no records (lanes that do: %s)", field, k.Name, strings.Join(reg0(w).RecordLanes(), ", "))
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
func (w *wiring) records() *records.Reader {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recs == nil {
		data := w.data
		if w.recordData != "" {
			data = w.recordData
		}
		w.recs = records.New(data)
	}
	return w.recs
}
