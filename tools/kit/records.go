package kit

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Record is one verified record of a campaign: a done task whose judged
// attempt's latest verdict revision passed every stage (not pending, not
// failed, not suspected of sidestepping the task). Records of one lane
// become tasks of another (tasks.from_campaign; kiln ptx prepare
// --from-campaign): a cuda-synth program becomes a cuda2hip task, or
// ptx2cuda tasks of its kernels.
type Record struct {
	// Key is the source task's key ("r0/basic_01#0"): unique in its
	// campaign, stable across reads.
	Key string
	// Campaign and CampaignID name the source campaign, Lane its lane.
	Campaign, CampaignID, Lane string
	// TaskID, AttemptID and VerdictID (of Revision) say which task,
	// attempt and verdict revision the record is: its provenance.
	TaskID, AttemptID, VerdictID string
	Revision                     int
	// Categories are the source task's categories.
	Categories []string
	// Domain is the verdict's domain label ("" where the lane has none).
	Domain string
	// Meta is the source task's metadata.
	Meta map[string]string
	// Files are the source task's files (a torch2cuda task's
	// reference.py, ...).
	Files map[string]string
	// Answer is the verified answer as the lane extracted it (for
	// cuda-synth, the CUDA program).
	Answer string
	// Stage is the verdict's last stage, Measurements its measurements,
	// Artifacts its artifacts by name (blob hashes: RecordReader.Artifact
	// reads one).
	Stage        string
	Measurements map[string]float64
	Artifacts    map[string]string
}

// RecordSet is a campaign's verified records, in the campaign's claim
// order, and how many judged tasks were left out and why.
type RecordSet struct {
	Campaign, CampaignID, Lane string
	Records                    []Record
	// Pending counts passing verdicts with stages left for another host
	// (a GPU run not made yet), Failed failed verdicts, TaskFaults
	// verdicts whose task's own reference failed, Suspect passing verdicts
	// whose answer the lane's suspicion check flagged.
	Pending, Failed, TaskFaults, Suspect int
}

// RecordReader reads verified records from a run database. cmd/kiln
// provides it (kit.Host.Records); lanes never open the store.
type RecordReader interface {
	// VerifiedRecords returns the verified records of campaign (a name,
	// an id or a unique id prefix, as kiln resolves campaigns).
	VerifiedRecords(ctx context.Context, campaign string) (RecordSet, error)
	// Artifact returns the stored artifact with this blob hash.
	Artifact(ctx context.Context, hash string) ([]byte, error)
}

// Check says why s cannot be the tasks of lane, which takes records of
// lanes: field (a spec field or a flag, named in the error) names a
// campaign of another lane, or one with no verified record.
func (s RecordSet) Check(field, lane string, lanes []string) error {
	name := fmt.Sprintf("campaign %q (%s)", s.Campaign, s.CampaignID)
	if !slices.Contains(lanes, s.Lane) {
		return fmt.Errorf("%s: %s is of lane %s; lane %s takes records of %s", field, name, s.Lane, lane, strings.Join(lanes, ", "))
	}
	if len(s.Records) == 0 {
		var left []string
		if s.Pending > 0 {
			left = append(left, fmt.Sprintf("%d pending (a stage left for a GPU host: complete them there with kiln rescore --pending)", s.Pending))
		}
		if s.Failed > 0 {
			left = append(left, fmt.Sprintf("%d failed", s.Failed))
		}
		if s.TaskFaults > 0 {
			left = append(left, fmt.Sprintf("%d task faults (the task's own reference failed)", s.TaskFaults))
		}
		if s.Suspect > 0 {
			left = append(left, fmt.Sprintf("%d suspected of sidestepping the task", s.Suspect))
		}
		if len(left) == 0 {
			left = append(left, "no judged task")
		}
		return fmt.Errorf("%s: %s has no verified record: %s", field, name, strings.Join(left, ", "))
	}
	return nil
}

// RecordMeta is the provenance of a task made from r, for its Meta: the
// source campaign (name and id), lane, task (id and key), attempt and
// verdict.
func RecordMeta(r Record) map[string]string {
	return map[string]string{
		"source_campaign":    r.Campaign,
		"source_campaign_id": r.CampaignID,
		"source_lane":        r.Lane,
		"source_task":        r.TaskID,
		"source_task_key":    r.Key,
		"source_attempt":     r.AttemptID,
		"source_verdict":     r.VerdictID,
	}
}
