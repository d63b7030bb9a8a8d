package refinement

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
)

// Chart geometry of WriteSVG.
const (
	svgLeft    = 64
	svgTop     = 40
	svgPlotW   = 520
	svgPlotH   = 300
	svgLegendW = 220
	svgRowH    = 18
)

// svgPalette is a colour-blind-friendly palette (Okabe-Ito, then Tol);
// series past its length reuse colours with dashes.
var svgPalette = [...]string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
	"#000000", "#882255", "#117733", "#44AA99", "#999933"}

// WriteSVG draws series as a line chart: pass rate (0-100%) against round,
// a line per series with its 95% intervals as whiskers and a tooltip per
// point, axes with ticks, and a legend. The (all) series is drawn thick;
// series are spread a few pixels sideways so their whiskers stay apart.
// The output is a standalone SVG document.
func WriteSVG(w io.Writer, series []Series) error {
	var b bytes.Buffer
	rounds := svgRounds(series)
	height := max(svgTop+svgPlotH+56, svgTop+svgRowH*len(series)+24)
	width := svgLeft + svgPlotW + svgLegendW
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">Pass rate per category by round</text>`+"\n", svgLeft)
	writeSVGAxes(&b, rounds)
	for i, s := range series {
		writeSVGSeries(&b, rounds, i, len(series), s)
	}
	writeSVGLegend(&b, series)
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	if err != nil {
		return fmt.Errorf("write svg: %w", err)
	}
	return nil
}

// svgRounds lists the rounds of series' points, in order.
func svgRounds(series []Series) []int {
	roundSet := map[int]bool{}
	for _, s := range series {
		for _, p := range s.Points {
			roundSet[p.Round] = true
		}
	}
	rounds := make([]int, 0, len(roundSet))
	for r := range roundSet {
		rounds = append(rounds, r)
	}
	sort.Ints(rounds)
	return rounds
}

// svgY is the chart's y coordinate of a pass rate.
func svgY(rate float64) float64 { return svgTop + svgPlotH*(1-clamp01(rate)) }

// svgX is the chart's x coordinate of round, one of rounds.
func svgX(rounds []int, round int) float64 {
	if len(rounds) <= 1 {
		return svgLeft + svgPlotW/2
	}
	lo, hi := rounds[0], rounds[len(rounds)-1]
	return svgLeft + 20 + float64(svgPlotW-40)*float64(round-lo)/float64(hi-lo)
}

// svgStroke is the colour and dash attribute of the i-th series.
func svgStroke(i int) (color, dash string) {
	color = svgPalette[i%len(svgPalette)]
	if i >= len(svgPalette) {
		dash = fmt.Sprintf(` stroke-dasharray="%d 3"`, 2+2*(i/len(svgPalette)))
	}
	return color, dash
}

// writeSVGAxes writes the axes, grid and ticks, the axis labels, and a
// note when there are no rounds.
func writeSVGAxes(b *bytes.Buffer, rounds []int) {
	b.WriteString(`<g class="grid" stroke="#dddddd" stroke-width="1">` + "\n")
	for t := 0; t <= 100; t += 20 {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`+"\n", svgLeft, svgY(float64(t)/100), svgLeft+svgPlotW, svgY(float64(t)/100))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g class="axes" stroke="#333333" stroke-width="1">` + "\n")
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", svgLeft, svgTop, svgLeft, svgTop+svgPlotH)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", svgLeft, svgTop+svgPlotH, svgLeft+svgPlotW, svgTop+svgPlotH)
	b.WriteString("</g>\n")
	b.WriteString(`<g class="ticks" fill="#333333">` + "\n")
	for t := 0; t <= 100; t += 20 {
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%d%%</text>`+"\n", svgLeft-6, svgY(float64(t)/100), t)
	}
	for _, r := range rounds {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", svgX(rounds, r), svgTop+svgPlotH+18, r)
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">round</text>`+"\n", svgLeft+svgPlotW/2, svgTop+svgPlotH+40)
	fmt.Fprintf(b, `<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">pass rate</text>`+"\n", svgTop+svgPlotH/2)
	if len(rounds) == 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#777777">no results</text>`+"\n", svgLeft+svgPlotW/2, svgTop+svgPlotH/2)
	}
}

// writeSVGSeries writes s, the i-th of n series: its line, and per point
// a whisker for the interval and a dot with a tooltip.
func writeSVGSeries(b *bytes.Buffer, rounds []int, i, n int, s Series) {
	color, dash := svgStroke(i)
	// Spread the series a little sideways so whiskers at one round do
	// not hide each other.
	off := 0.0
	if n > 1 {
		off = (float64(i) - float64(n-1)/2) * math.Min(4, 40/float64(n))
	}
	width := 2.0
	if s.Name == AllCategories {
		width = 3.5
	}
	fmt.Fprintf(b, `<g class="series" data-name="%s">`+"\n", xmlAttr(s.Name))
	fmt.Fprintf(b, `<title>%s</title>`+"\n", xmlText(s.Name))
	if len(s.Points) > 1 {
		b.WriteString(`<polyline fill="none" stroke="` + color + `"` + dash + fmt.Sprintf(` stroke-width="%.1f" points="`, width))
		for j, p := range s.Points {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(b, "%.1f,%.1f", svgX(rounds, p.Round)+off, svgY(p.PassRate))
		}
		b.WriteString(`"/>` + "\n")
	}
	for _, p := range s.Points {
		px := svgX(rounds, p.Round) + off
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-opacity="0.35" stroke-width="1.5"/>`+"\n",
			px, svgY(p.Low), px, svgY(p.High), color)
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`+"\n", px, svgY(p.PassRate), color,
			xmlText(fmt.Sprintf("%s, round %d: %d/%d pass (%.0f%%, 95%% CI %.0f-%.0f%%)", s.Name, p.Round, p.Pass, p.Judged,
				100*p.PassRate, 100*p.Low, 100*p.High)))
	}
	b.WriteString("</g>\n")
}

// writeSVGLegend writes the legend, a row per series.
func writeSVGLegend(b *bytes.Buffer, series []Series) {
	lx := svgLeft + svgPlotW + 20
	b.WriteString(`<g class="legend">` + "\n")
	for i, s := range series {
		color, dash := svgStroke(i)
		ly := svgTop + 6 + i*svgRowH
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"%s stroke-width="2.5"/>`+"\n", lx, ly, lx+22, ly, color, dash)
		fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", lx+28, ly, xmlText(s.Name))
	}
	b.WriteString("</g>\n")
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return math.Min(v, 1)
}

func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s)) // writes to a buffer: cannot fail
	return b.String()
}

// xmlAttr escapes s for a double-quoted attribute (EscapeText escapes '"').
func xmlAttr(s string) string { return xmlText(s) }
