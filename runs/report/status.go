package report

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
)

// StatusRow is one campaign of kiln status, with its counts.
type StatusRow struct {
	ID      string      `json:"id"`
	Name    string      `json:"name"`
	Lane    string      `json:"lane"`
	State   string      `json:"state"`
	Round   int         `json:"round"`
	Note    string      `json:"note,omitempty"`
	Created time.Time   `json:"created"`
	Counts  runs.Counts `json:"counts"`
}

// StatusRows reads the counts of camps, every round together.
func StatusRows(ctx context.Context, st *runs.Store, camps []runs.Campaign) ([]StatusRow, error) {
	var rows []StatusRow
	for _, camp := range camps {
		n, err := st.Counts(ctx, camp.ID, -1)
		if err != nil {
			return nil, err
		}
		rows = append(rows, StatusRow{camp.ID, camp.Name, camp.Lane, string(camp.State), camp.Round, camp.Note, camp.CreatedAt, n})
	}
	return rows, nil
}

// Status prints kiln status's table of rows.
func Status(w io.Writer, rows []StatusRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tLANE\tSTATE\tTASKS\tDONE\tPASS\tFAIL\tPENDING\tTASK FAULTS\tQUEUED\tTOKENS\tCREATED\tNOTE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", r.ID[:8], r.Name, r.Lane, r.State,
			r.Counts.Tasks, r.Counts.Done, r.Counts.Pass, r.Counts.Fail, r.Counts.Pending, r.Counts.TaskFaults, r.Counts.Queued,
			r.Counts.PromptTokens+r.Counts.CompletionTokens, r.Created.Local().Format("2006-01-02 15:04"), r.Note)
	}
	return tw.Flush()
}

// Rescore prints what kiln rescore changed in a campaign's verdicts.
func Rescore(w io.Writer, campaignID string, sum engine.RescoreSummary) {
	b, a := sum.Before, sum.After
	fmt.Fprintf(w, "rescored %d answers of campaign %s: pass %d -> %d, fail %d -> %d, pending %d -> %d, task faults %d -> %d; %d verdicts changed\n",
		sum.Total, campaignID, b.Pass, a.Pass, b.Fail, a.Fail, b.Pending, a.Pending, b.TaskFaults, a.TaskFaults, sum.Changed)
	if b.Pending > 0 {
		p := sum.FromPending
		fmt.Fprintf(w, "of %d pending: %d became pass, %d became fail, %d task faults, %d stayed pending\n",
			b.Pending, p.Pass, p.Fail, p.TaskFaults, p.Still)
	}
}
