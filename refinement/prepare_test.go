package refinement

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

// TestScreenPreparer: a Preparer's candidates are accepted as prepared,
// with the hash of their prepared files, and deduplicated by it after
// preparation; identical candidates are dropped before.
func TestScreenPreparer(t *testing.T) {
	t.Parallel()
	// The lane's identity is out.txt, which only Prepare makes: the first
	// word of src.c.
	lanes, err := NewLanes(LaneRules{Lane: "prep", Identity: Identity{Files: func(n string) bool { return n == "out.txt" }, NoPrompt: true}})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	p := PrepareFunc(func(ctx context.Context, c Candidate) (Candidate, error) {
		calls.Add(1)
		src := c.Files["src.c"]
		switch src {
		case "bad":
			return c, errors.New("does not build")
		case "broken":
			return c, ErrValidatorBroken
		}
		files := map[string]string{"src.c": src, "out.txt": strings.Fields(src)[0]}
		// What Prepare says of lane, index and category is ignored.
		return Candidate{Lane: "other", Index: 99, Category: "other", Function: c.Function, Files: files}, nil
	})
	cand := func(i int, src string) Candidate {
		return Candidate{Lane: "prep", Index: i, Category: "cat", Function: "f", Files: map[string]string{"src.c": src}}
	}
	cands := []Candidate{cand(1, "alpha one"), cand(2, "alpha one"), cand(3, "alpha two"), cand(4, "known x"),
		cand(5, "bad"), cand(6, "gamma"), cand(7, "broken")}
	for i := range cands {
		cands[i].Hash = lanes.SourceHash("prep", cands[i].Files, "") // as ParseSynthesized sets it
	}
	existing := []runs.Task{{Key: "r0/known", Lane: "prep", Files: map[string]string{"out.txt": "known"}}}
	acc, rej, err := Screen(context.Background(), cands, ScreenOptions{Validator: p, Parallel: 2, Lanes: lanes, Existing: existing})
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 6 {
		t.Errorf("%d preparations, want 6 (candidate 2 is candidate 1 again)", n)
	}
	if len(acc) != 2 || acc[0].Index != 1 || acc[1].Index != 6 {
		t.Fatalf("accepted %+v", acc)
	}
	for _, c := range acc {
		if c.Lane != "prep" || c.Category != "cat" || c.Files["out.txt"] == "" || c.Hash != lanes.SourceHash("prep", c.Files, "") {
			t.Errorf("accepted candidate %+v", c)
		}
	}
	want := map[int]struct {
		err  error
		text string
	}{
		2: {ErrDuplicate, "same source as candidate 1"},
		3: {ErrDuplicate, "as candidate 1"},
		4: {ErrDuplicate, "existing task r0/known"},
		5: {ErrInvalid, "does not build"},
		7: {ErrValidatorBroken, ""},
	}
	if len(rej) != len(want) {
		t.Fatalf("rejected %+v", rej)
	}
	for _, r := range rej {
		w, ok := want[r.Candidate.Index]
		if !ok || !errors.Is(r.Err, w.err) || !strings.Contains(r.Err.Error(), w.text) {
			t.Errorf("candidate %d rejected with %v", r.Candidate.Index, r.Err)
		}
	}

	// Its Validate is Prepare's verdict.
	if err := p.Validate(context.Background(), cand(8, "bad")); err == nil {
		t.Error("Validate accepts what Prepare rejects")
	}
}
