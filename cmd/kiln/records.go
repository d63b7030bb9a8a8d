package main

import (
	"context"

	"github.com/kiln-dev/kiln/runs/records"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/kit"
)

// tasks is sp's tasks section as k's Source reads it, with
// tasks.from_campaign's records read from the data folder's store
// (records.Reader.Tasks).
func (w *wiring) tasks(ctx context.Context, sp *spec.Spec, k *kit.Kit) (kit.Tasks, error) {
	t := kitTasks(sp)
	if t.FromCampaign == "" {
		return t, nil
	}
	return w.records().Tasks(ctx, t, k, reg0(w))
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
