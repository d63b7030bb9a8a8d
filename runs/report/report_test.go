package report

import (
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs/engine"
)

// TestPrintRoundFast1: kiln report's round table gives fast_1 before and
// after with intervals when the lane measures speed, and no such columns
// when it does not.
func TestPrintRoundFast1(t *testing.T) {
	t.Parallel()
	before := 0
	stats := func(pass, judged int) refinement.CategoryStats {
		lo, hi := refinement.Wilson(pass, judged, 1.96)
		return refinement.CategoryStats{Category: "conv", Pass: pass, Judged: judged, Total: judged,
			PassRate: float64(pass) / float64(judged), Low: lo, High: hi}
	}
	b, a := stats(1, 8), stats(5, 8)
	rr := refinement.RoundReport{Round: 1, Overall: a, Categories: []refinement.Delta{{Category: "conv", Targeted: true,
		BeforeRound: &before, Before: &b, After: a,
		Fast1Before: &refinement.Rate{Count: 0, Rate: 0, Low: 0, High: 0.32}, Fast1After: &refinement.Rate{Count: 2, Rate: 0.25, Low: 0.07, High: 0.59}}}}
	var out strings.Builder
	printRound(&out, rr, engine.RoundRecord{})
	for _, w := range []string{"FAST_1 BEFORE", "FAST_1 AFTER", "0.0% [0, 32]", "25.0% [7, 59]", "r0 1/8 (12.5%)", "5/8 (62.5%)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("round table lacks %q:\n%s", w, out.String())
		}
	}
	rr.Categories[0].Fast1Before, rr.Categories[0].Fast1After = nil, nil
	out.Reset()
	printRound(&out, rr, engine.RoundRecord{})
	if strings.Contains(out.String(), "FAST_1") {
		t.Errorf("fast_1 columns without speed figures:\n%s", out.String())
	}
}
