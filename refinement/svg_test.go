package refinement

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// svgDoc parses an SVG document with encoding/xml, failing on malformed
// XML, and returns the legend texts, polylines, circles and <title>s.
func svgDoc(t *testing.T, b []byte) (legend []string, polylines, circles int, titles []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var stack []string
	inLegend := 0 // depth of the legend group, 0 when outside
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("malformed XML: %v\n%s", err, b)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
				if el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", el.Name.Space)
				}
			}
			stack = append(stack, el.Name.Local)
			for _, a := range el.Attr {
				if el.Name.Local == "g" && a.Name.Local == "class" && a.Value == "legend" {
					inLegend = len(stack)
				}
			}
			switch el.Name.Local {
			case "polyline":
				polylines++
			case "circle":
				circles++
			}
			for _, a := range el.Attr {
				if strings.Contains(a.Value, "NaN") || strings.Contains(a.Value, "Inf") {
					t.Errorf("attribute %s=%q", a.Name.Local, a.Value)
				}
			}
		case xml.EndElement:
			if len(stack) == inLegend {
				inLegend = 0
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if inLegend > 0 && stack[len(stack)-1] == "text" {
				legend = append(legend, string(el))
			}
			if len(stack) > 0 && stack[len(stack)-1] == "title" {
				titles = append(titles, string(el))
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements %v", stack)
	}
	return legend, polylines, circles, titles
}

func TestWriteSVG(t *testing.T) {
	t.Parallel()
	series := []Series{
		{Name: "switch_many", Points: []Point{{Round: 0, Pass: 1, Judged: 8, Total: 8, PassRate: 0.125, Low: 0.0224, High: 0.4709},
			{Round: 1, Pass: 6, Judged: 10, Total: 10, PassRate: 0.6, Low: 0.3127, High: 0.8318}}},
		{Name: `a<b & "c"`, Points: []Point{{Round: 1, Pass: 1, Judged: 1, Total: 1, PassRate: 1, Low: 0.2065, High: 1}}},
		{Name: AllCategories, Points: []Point{{Round: 0, Pass: 8, Judged: 16, Total: 16, PassRate: 0.5, Low: 0.28, High: 0.72},
			{Round: 1, Pass: 9, Judged: 17, Total: 17, PassRate: 9.0 / 17, Low: 0.31, High: 0.74}, {Round: 3, Pass: 1, Judged: 2, Total: 2, PassRate: 0.5, Low: 0.09, High: 0.91}}},
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, series); err != nil {
		t.Fatal(err)
	}
	legend, polylines, circles, titles := svgDoc(t, buf.Bytes())
	for _, s := range series {
		found := false
		for _, l := range legend {
			found = found || l == s.Name
		}
		if !found {
			t.Errorf("legend %q lacks %q", legend, s.Name)
		}
	}
	// Lines for the series with two or more points; one circle per point.
	if polylines != 2 || circles != 6 {
		t.Errorf("%d polylines, %d circles; want 2 and 6", polylines, circles)
	}
	joined := strings.Join(titles, "\n")
	for _, w := range []string{"switch_many, round 1: 6/10 pass (60%, 95% CI 31-83%)", `a<b & "c", round 1: 1/1 pass`} {
		if !strings.Contains(joined, w) {
			t.Errorf("tooltips lack %q:\n%s", w, joined)
		}
	}
	// Round ticks 0, 1, 3 and the percent axis.
	for _, w := range []string{">0</text>", ">1</text>", ">3</text>", ">100%</text>", ">round</text>"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("svg lacks %q", w)
		}
	}
}

func TestWriteSVGEdgeCases(t *testing.T) {
	t.Parallel()
	many := make([]Series, 15)
	for i := range many {
		many[i] = Series{Name: strings.Repeat("x", i+1), Points: []Point{{Round: 2, PassRate: float64(i) / 15, High: 1}}}
	}
	for name, s := range map[string][]Series{"empty": nil, "one round": {{Name: "a", Points: []Point{{Round: 4, PassRate: 0.5}}}},
		"many series": many, "out of range": {{Name: "a", Points: []Point{{Round: 0, PassRate: 2, Low: -1, High: 3}}}}} {
		var buf bytes.Buffer
		if err := WriteSVG(&buf, s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		legend, _, _, _ := svgDoc(t, buf.Bytes())
		if len(legend) != len(s) {
			t.Errorf("%s: %d legend entries, want %d", name, len(legend), len(s))
		}
	}
	if err := WriteSVG(failWriter{}, nil); err == nil {
		t.Error("write error not reported")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
