package cuda2hip

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit"
)

// recordLanes are the lanes whose verified records the lane takes
// (tasks.from_campaign): cuda-synth, whose answers are CUDA programs.
var recordLanes = []string{cudasynth.LaneName}

// recordSlugRE finds what an item ID made from a task key may not hold.
var recordSlugRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// recordItems turns verified cuda-synth records (tasks.from_campaign) into
// programs to translate: each record's answer (its CUDA program) is an
// item carrying the record's categories (DefaultCategory when it has
// none), its domain and its provenance (kit.RecordMeta: source campaign,
// task, attempt, verdict). An item's ID is "rec-" and the source task's key
// made file-name safe ("r0/basic_01#0" -> "rec-r0_basic_01_0"), with a
// short hash of the task id when two keys come out the same.
func recordItems(t kit.Tasks) ([]Item, error) {
	const field = "tasks.from_campaign"
	if len(t.Records) == 0 {
		return nil, fmt.Errorf("%s: no verified record of campaign %q was given to the lane", field, t.FromCampaign)
	}
	var items []Item
	seen := map[string]bool{}
	var errs []error
	for _, r := range t.Records {
		if r.Lane != cudasynth.LaneName {
			errs = append(errs, fmt.Errorf("%s: record %s of campaign %s is of lane %s; lane %s takes records of %s",
				field, r.Key, r.Campaign, r.Lane, LaneName, strings.Join(recordLanes, ", ")))
			continue
		}
		if strings.TrimSpace(r.Answer) == "" {
			errs = append(errs, fmt.Errorf("%s: record %s of campaign %s has an empty program", field, r.Key, r.Campaign))
			continue
		}
		id := "rec-" + strings.Trim(recordSlugRE.ReplaceAllString(r.Key, "_"), "_")
		if seen[id] {
			sum := sha256.Sum256([]byte(r.TaskID))
			id += "-" + hex.EncodeToString(sum[:4])
		}
		seen[id] = true
		cats := r.Categories
		if len(cats) == 0 {
			cats = []string{DefaultCategory}
		}
		items = append(items, Item{ID: id, Category: cats[0], Categories: cats, Domain: r.Domain, Program: r.Answer,
			ExpectTranslate: true, Meta: kit.RecordMeta(r)})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return items, nil
}
