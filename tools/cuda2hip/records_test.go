package cuda2hip

import (
	"slices"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit"
)

// synthRecords are verified cuda-synth records of three corpus programs
// (one of them with two categories).
func synthRecords(t *testing.T) []kit.Record {
	t.Helper()
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	var out []kit.Record
	for i, id := range []string{"basic_01_reduce_sum_shfl", "sparse_01_spmv_csr_warp", "img_01_gaussian_separable"} {
		for _, it := range items {
			if it.ID != id {
				continue
			}
			cats := []string{it.Category}
			if i == 2 {
				cats = append(cats, "shared_memory")
			}
			out = append(out, kit.Record{Key: "r0/" + id + "#0", Campaign: "synth", CampaignID: "cid", Lane: cudasynth.LaneName,
				TaskID: "task-" + id, AttemptID: "attempt-" + id, VerdictID: "verdict-" + id, Revision: 1,
				Categories: cats, Domain: it.Domain, Answer: it.Program, Stage: "run"})
		}
	}
	if len(out) != 3 {
		t.Fatalf("%d records", len(out))
	}
	return out
}

// TestSourceFromRecords: tasks.from_campaign makes one task per verified
// cuda-synth record, carrying its program, categories, domain and
// provenance; categories, limit and samples work on records as on a
// corpus; records of other lanes, empty programs, no records and a
// corpus beside them are errors naming the field.
func TestSourceFromRecords(t *testing.T) {
	t.Parallel()
	recs := synthRecords(t)
	ts, err := source(kit.Tasks{FromCampaign: "synth", Records: recs, SamplesPerTask: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Round0) != 6 || len(ts.Corpus) != 3 {
		t.Fatalf("%d round-0 tasks, %d corpus tasks", len(ts.Round0), len(ts.Corpus))
	}
	byKey := map[string]bool{}
	for _, task := range ts.Round0 {
		byKey[task.Key] = true
		id := task.Meta["item"]
		var rec kit.Record
		for _, r := range recs {
			if "rec-"+strings.NewReplacer("/", "_", "#", "_").Replace(r.Key) == id {
				rec = r
			}
		}
		if rec.Key == "" {
			t.Fatalf("task %s: item %q is no record's", task.Key, id)
		}
		if task.Files[ProgramFile] != rec.Answer || !slices.Equal(task.Categories, rec.Categories) || task.Meta["domain"] != rec.Domain {
			t.Errorf("task %s: files, categories %v or domain %q differ from the record's", task.Key, task.Categories, task.Meta["domain"])
		}
		for k, v := range map[string]string{"source_campaign": "synth", "source_campaign_id": "cid", "source_lane": cudasynth.LaneName,
			"source_task": rec.TaskID, "source_task_key": rec.Key, "source_attempt": rec.AttemptID, "source_verdict": rec.VerdictID} {
			if task.Meta[k] != v {
				t.Errorf("task %s: meta %s = %q, want %q", task.Key, k, task.Meta[k], v)
			}
		}
		if !strings.Contains(task.Prompt, "(task "+id+")") || !strings.Contains(task.Prompt, "__global__") {
			t.Errorf("task %s: prompt lacks the program or its id", task.Key)
		}
	}
	if !byKey["r0/rec-r0_img_01_gaussian_separable_0#1"] {
		t.Errorf("keys %v", byKey)
	}
	if !slices.Contains(ts.Known, "shared_memory") {
		t.Errorf("known categories %v", ts.Known)
	}
	again, err := source(kit.Tasks{FromCampaign: "synth", Records: recs, SamplesPerTask: 2, Seed: 1})
	if err != nil || len(again.Round0) != len(ts.Round0) || again.Round0[0].Key != ts.Round0[0].Key || again.Round0[0].Prompt != ts.Round0[0].Prompt {
		t.Errorf("not deterministic: %v", err)
	}
	drawn, err := ts.Draw(1, map[string]float64{"shared_memory": 5})
	if err != nil || len(drawn) != 6 {
		t.Errorf("draw: %d tasks, %v", len(drawn), err)
	}

	filtered, err := source(kit.Tasks{FromCampaign: "synth", Records: recs, Categories: []string{"shared_memory"}, SamplesPerTask: 1})
	if err != nil || len(filtered.Round0) != 1 || filtered.Round0[0].Meta["source_task_key"] != "r0/img_01_gaussian_separable#0" {
		t.Errorf("category filter: %v %v", filtered, err)
	}
	limited, err := source(kit.Tasks{FromCampaign: "synth", Records: recs, Limit: 2, SamplesPerTask: 1, Seed: 3})
	if err != nil || len(limited.Round0) != 2 {
		t.Errorf("limit: %v", err)
	}

	hip := slices.Clone(recs)
	hip[1].Lane = LaneName
	empty := slices.Clone(recs)
	empty[0].Answer = " \n"
	for _, c := range []struct {
		name string
		t    kit.Tasks
		want string
	}{
		{"no records", kit.Tasks{FromCampaign: "synth"}, `tasks.from_campaign: no verified record of campaign "synth"`},
		{"other lane", kit.Tasks{FromCampaign: "synth", Records: hip}, "is of lane cuda2hip; lane cuda2hip takes records of cuda-synth"},
		{"empty program", kit.Tasks{FromCampaign: "synth", Records: empty}, "has an empty program"},
		{"with a corpus", kit.Tasks{FromCampaign: "synth", Records: recs, Corpus: "builtin"}, "tasks.from_campaign: cannot be used together with tasks.corpus"},
		{"unknown category", kit.Tasks{FromCampaign: "synth", Records: recs, Categories: []string{"nope"}}, `no item of category "nope" in tasks.from_campaign`},
	} {
		if _, err := source(c.t); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if k := Kit(); !slices.Equal(k.RecordLanes, []string{cudasynth.LaneName}) {
		t.Errorf("RecordLanes %v", k.RecordLanes)
	}
}
