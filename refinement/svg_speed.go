package refinement

import (
	"bytes"
	"fmt"
	"io"
)

// Geometry of WriteSpeedSVG: a row of bars per category.
const (
	speedLabelW = 150
	speedBarW   = 420
	speedBarH   = 7 // one bar; a row holds a bar per figure and a gap
	speedTop    = 56
)

// WriteSpeedSVG draws the kernel-speed figures as a standalone SVG: a row
// per category with exec and fast_p (p in FastThresholds) as bars from 0 to
// 100% with their 95% intervals as whiskers, and the geometric-mean speedup
// and the count judged as text. A tooltip per bar gives the figures.
func WriteSpeedSVG(w io.Writer, speed []SpeedStats) error {
	var b bytes.Buffer
	keys := []string{"exec"}
	for _, p := range FastThresholds {
		keys = append(keys, FastKey(p))
	}
	sub := speedBarH
	rowH := sub * (len(keys) + 1)
	width := speedLabelW + speedBarW + 200
	height := speedTop + rowH*len(speed) + 40
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">Kernel speed per category: exec and fast_p (95%% CI)</text>`+"\n", 10)
	// Legend and the 0/50/100% grid.
	for i, k := range keys {
		color, _ := svgStroke(i)
		fmt.Fprintf(&b, `<rect x="%d" y="32" width="10" height="10" fill="%s"/><text x="%d" y="41">%s</text>`+"\n",
			speedLabelW+i*90, color, speedLabelW+i*90+14, xmlText(k))
	}
	for _, f := range []float64{0, 0.5, 1} {
		x := speedLabelW + f*speedBarW
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#cccccc"/>`+"\n", x, speedTop-4, x, speedTop+rowH*len(speed))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">%.0f%%</text>`+"\n", x, speedTop+rowH*len(speed)+16, 100*f)
	}
	for r, s := range speed {
		y0 := speedTop + r*rowH
		fmt.Fprintf(&b, `<g class="category"><text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n",
			speedLabelW-8, y0+rowH/2, xmlText(s.Category))
		for i, k := range keys {
			rate := s.Exec
			if k != "exec" {
				rate = s.Fast[k]
			}
			color, _ := svgStroke(i)
			y := y0 + i*sub
			x1, x2 := speedLabelW+clamp01(rate.Low)*speedBarW, speedLabelW+clamp01(rate.High)*speedBarW
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				speedLabelW, y, clamp01(rate.Rate)*speedBarW, sub-1, color,
				xmlText(fmt.Sprintf("%s %s: %.1f%% (95%% CI %.0f-%.0f%%) of %d judged", s.Category, k, 100*rate.Rate, 100*rate.Low, 100*rate.High, s.Judged)))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", x1, float64(y)+float64(sub)/2, x2, float64(y)+float64(sub)/2)
		}
		geo := "geomean -"
		if s.GeoMeanSpeedup > 0 {
			geo = fmt.Sprintf("geomean %.3gx", s.GeoMeanSpeedup)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s, %d judged</text></g>`+"\n",
			speedLabelW+speedBarW+10, y0+rowH/2, xmlText(geo), s.Judged)
	}
	b.WriteString("</svg>\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write svg: %w", err)
	}
	return nil
}
