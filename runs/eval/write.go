package eval

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"

	"github.com/kiln-dev/kiln/runs/report"
)

// WriteMarkdown writes the report as Markdown tables: pass@k per lane and
// category with one row per model, then stage rates, then measurements.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	lanes := lanesOf(r.Rows)
	for _, lane := range lanes {
		fmt.Fprintf(&b, "## %s\n\n", lane)
		b.WriteString("| category | model | tasks | samples | pass | pending | task faults | fail |")
		for _, k := range r.K {
			fmt.Fprintf(&b, " pass@%d |", k)
		}
		b.WriteString(" top failures |\n|---|---|---:|---:|---:|---:|---:|---:|")
		for range r.K {
			b.WriteString("---:|")
		}
		b.WriteString("---|\n")
		pending, faults := 0, 0
		for _, row := range r.Rows {
			if row.Lane != lane {
				continue
			}
			if row.Category == All {
				pending += row.Pending
				faults += row.TaskFaults
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d |", row.Category, row.Model, row.Tasks, row.Samples,
				row.Passed, row.Pending, row.TaskFaults, row.Failed)
			for _, k := range r.K {
				if v, ok := row.PassAtK[k]; ok {
					fmt.Fprintf(&b, " %.3f |", v)
				} else {
					b.WriteString(" - |")
				}
			}
			fmt.Fprintf(&b, " %s |\n", report.TopClasses(row.Classes, 3))
		}
		if pending > 0 {
			fmt.Fprintf(&b, "\n%d answers are pending: they passed every stage this host could run and await a GPU or AMD host "+
				"(kiln rescore --pending there, then kiln eval again). pass@k leaves them out: it is over judged answers.\n", pending)
		}
		if faults > 0 {
			fmt.Fprintf(&b, "\n%d answers are task faults: the task's own reference failed. They are neither passes nor failures; pass@k leaves them out.\n", faults)
		}
		if slices.ContainsFunc(r.Rows, func(row Row) bool { return row.Lane == lane && len(row.PassAtK) < len(r.K) }) {
			b.WriteString("\n`-`: k is larger than the fewest judged answers of a task in that row, or nothing in it is judged.\n")
		}
		b.WriteString("\n")
		r.writeStages(&b, lane)
		r.writeMeasures(&b, lane)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (r *Report) writeStages(b *bytes.Buffer, lane string) {
	var rows []StageRate
	for _, s := range r.Stages {
		if s.Lane == lane {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("| model | stage | passed | skipped (pending) |\n|---|---|---:|---:|\n")
	for _, s := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", s.Model, s.Stage, share(s.Passed, s.Samples), share(s.Skipped, s.Samples))
	}
	b.WriteString("\n")
}

func (r *Report) writeMeasures(b *bytes.Buffer, lane string) {
	var rows []Measure
	for _, m := range r.Measures {
		if m.Lane == lane {
			rows = append(rows, m)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("| model | measurement | n | mean | median | geomean |\n|---|---|---:|---:|---:|---:|\n")
	for _, m := range rows {
		geo := "-"
		if m.GeoMean > 0 {
			geo = fmt.Sprintf("%.4g", m.GeoMean)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %.4g | %.4g | %s |\n", m.Model, m.Name, m.N, m.Mean, m.Median, geo)
	}
	b.WriteString("\n")
}

func share(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", n, of, 100*float64(n)/float64(of))
}

// Chart geometry of WriteSVG.
const (
	svgLeft   = 180
	svgTop    = 44
	svgPlotW  = 460
	svgBarH   = 14
	svgGroupG = 10
	svgLegend = 24
)

// svgColours is the Okabe-Ito palette (colour-blind friendly).
var svgColours = [...]string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

// WriteSVG draws pass@k (the smallest k of the report) as horizontal bars:
// a group per lane and category, a bar per model, the value at its end.
// The output is a standalone SVG document.
func (r *Report) WriteSVG(w io.Writer) error {
	k := r.K[0]
	type group struct {
		label string
		rows  []Row
	}
	var groups []group
	for _, row := range r.Rows {
		label := row.Lane + " / " + row.Category
		if len(groups) == 0 || groups[len(groups)-1].label != label {
			groups = append(groups, group{label: label})
		}
		g := &groups[len(groups)-1]
		g.rows = append(g.rows, row)
	}
	nModels := max(len(r.Models), 1)
	groupH := nModels*svgBarH + svgGroupG
	height := svgTop + len(groups)*groupH + svgLegend + 30
	width := svgLeft + svgPlotW + 80
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">pass@%d per lane and category</text>`+"\n", 10, k)
	for tick := 0; tick <= 100; tick += 25 {
		x := svgLeft + svgPlotW*tick/100
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#dddddd"/>`+"\n", x, svgTop-6, x, svgTop+len(groups)*groupH)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#555555">%d%%</text>`+"\n", x, svgTop-10, tick)
	}
	for gi, g := range groups {
		y0 := svgTop + gi*groupH
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgLeft-8, y0+nModels*svgBarH/2+4, xmlText(g.label))
		for _, row := range g.rows {
			mi := slices.Index(r.Models, row.Model)
			y := y0 + mi*svgBarH
			v, ok := row.PassAtK[k]
			colour := svgColours[mi%len(svgColours)]
			if !ok {
				fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#888888">n/a</text>`+"\n", svgLeft+4, y+svgBarH-3)
				continue
			}
			bw := float64(svgPlotW) * v
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: pass@%d %.3f (%d tasks, %d samples, %d pending)</title></rect>`+"\n",
				svgLeft, y+1, bw, svgBarH-2, colour, xmlText(row.Model), k, v, row.Tasks, row.Samples, row.Pending)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%.1f%%</text>`+"\n", float64(svgLeft)+bw+4, y+svgBarH-3, 100*v)
		}
	}
	ly := svgTop + len(groups)*groupH + 18
	x := svgLeft
	for mi, m := range r.Models {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", x, ly-10, svgColours[mi%len(svgColours)])
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+16, ly, xmlText(m))
		x += 24 + 7*len(m)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
