package refinement

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteSpeedSVG(t *testing.T) {
	speed := []SpeedStats{
		{Category: "matmul & <conv>", Judged: 6, Exec: Rate{Rate: 1, Low: 0.61, High: 1},
			Fast: map[string]Rate{"fast_0": {Rate: 1, Low: 0.61, High: 1}, "fast_1": {Rate: 0, Low: 0, High: 0.39},
				"fast_1.5": {}, "fast_2": {}}, GeoMeanSpeedup: 0.59},
		{Category: "loss", Judged: 8, Exec: Rate{Rate: 1, Low: 0.68, High: 1},
			Fast: map[string]Rate{"fast_0": {Rate: 1}, "fast_1": {Rate: 0.875, Low: 0.53, High: 0.98}, "fast_1.5": {Rate: 0.75},
				"fast_2": {Rate: 0.5}}, GeoMeanSpeedup: 1.87},
		{Category: "empty", Judged: 3, Fast: map[string]Rate{}},
	}
	var b bytes.Buffer
	if err := WriteSpeedSVG(&b, speed); err != nil {
		t.Fatal(err)
	}
	_, _, _, titles := svgDoc(t, b.Bytes())
	if want := len(speed) * (1 + len(FastThresholds)); len(titles) != want {
		t.Fatalf("%d bar tooltips, want %d: %v", len(titles), want, titles)
	}
	for _, want := range []string{"loss fast_1: 87.5% (95% CI 53-98%) of 8 judged", "matmul & <conv> exec: 100.0%"} {
		found := false
		for _, ti := range titles {
			found = found || strings.Contains(ti, want)
		}
		if !found {
			t.Errorf("no tooltip %q in %v", want, titles)
		}
	}
	s := b.String()
	for _, want := range []string{"geomean 1.87x, 8 judged", "geomean 0.59x", "geomean -, 3 judged", "fast_1.5"} {
		if !strings.Contains(s, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}
