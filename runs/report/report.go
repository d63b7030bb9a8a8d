// Package report prints the reports of kiln's campaigns as text: a
// campaign's report (engine.CampaignReport: categories, kernel speed,
// faults, refinement rounds and their choices, cost) and the plan of its
// next refinement round (engine.RefinePlan); also kiln status, gc,
// rescore, verify and doctor.
package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
)

// Write prints a campaign's report as kiln report does: the per-category
// table of the selected round(s), the kernel-speed table and the faults,
// then, for a campaign with rounds, every round against the one before, the
// choices and their reasons, the synthesis and the cost.
func Write(out io.Writer, camp runs.Campaign, rep engine.CampaignReport) error {
	fmt.Fprintf(out, "campaign %s (%s, lane %s, %s)\n", camp.ID, camp.Name, camp.Lane, camp.State)
	if camp.Parent != "" {
		fmt.Fprintf(out, "refinement of campaign %s\n", camp.Parent)
	}
	if camp.Note != "" {
		fmt.Fprintf(out, "note: %s\n", camp.Note)
	}
	fmt.Fprintln(out)
	if err := printCategories(out, rep.Stats); err != nil {
		return err
	}
	if len(rep.Speed) > 0 {
		printSpeed(out, rep.Speed)
	}
	printFaults(out, rep)
	if len(rep.Refinement.Rounds) < 2 && len(rep.Decisions) == 0 {
		return nil
	}
	decided := map[int]engine.RoundRecord{}
	for _, d := range rep.Decisions {
		decided[d.Round] = d
	}
	for _, rr := range rep.Refinement.Rounds {
		printRound(out, rr, decided[rr.Round])
	}
	t := rep.Refinement.Total
	sc := rep.SynthesisCost
	fmt.Fprintf(out, "\ncost: %d attempts, %d prompt + %d completion tokens (%d reasoning), model time %s; synthesis: %d calls, %d prompt + %d completion tokens, %s\n",
		t.Attempts, t.PromptTokens, t.CompletionTokens, t.ReasoningTokens, msString(t.LatencyMS),
		sc.Calls, sc.PromptTokens, sc.CompletionTokens, msString(sc.LatencyMS))
	return nil
}

// printCategories prints kiln report's category table: results by
// outcome, the pass rate over judged ones (PASS + FAIL; "-" when nothing
// is judged) with its interval, tokens and the top failure classes.
func printCategories(out io.Writer, stats []refinement.CategoryStats) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CATEGORY\tTASKS\tPASS\tFAIL\tPENDING\tTASK FAULTS\tRATE\t95% CI\tTOKENS\tTOP FAILURES\t")
	for _, s := range stats {
		ci := "-"
		if s.Rated() {
			ci = fmt.Sprintf("[%.0f%%, %.0f%%]", 100*s.Low, 100*s.High)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t\n", s.Category, s.Total, s.Pass, s.Fail, s.Pending, s.TaskFaults,
			rateText(s), ci, s.PromptTokens+s.CompletionTokens, TopClasses(s.Classes, 3))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pending := slices.ContainsFunc(stats, func(s refinement.CategoryStats) bool { return s.Pending > 0 })
	faults := slices.ContainsFunc(stats, func(s refinement.CategoryStats) bool { return s.TaskFaults > 0 })
	if pending || faults {
		fmt.Fprintln(out, "RATE = PASS / (PASS + FAIL), over judged results; -: nothing judged.")
	}
	if pending {
		fmt.Fprintln(out, "PENDING: passed every stage that ran, stages left for a GPU host (kiln rescore --pending there); not a pass yet.")
	}
	if faults {
		fmt.Fprintln(out, "TASK FAULTS: the task's own reference failed; not the answer's fault, neither a pass nor a fail.")
	}
	return nil
}

// rateText is a pass rate as kiln report prints it: "-" when nothing is
// judged.
func rateText(s refinement.CategoryStats) string {
	if !s.Rated() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*s.PassRate)
}

// outcomeText says what a set of results came to: "6 pass of 18 judged
// (33.3%, 95% CI 16-56%)", then the pending ones and task faults apart.
func outcomeText(o refinement.CategoryStats) string {
	text := "nothing judged"
	if o.Rated() {
		text = fmt.Sprintf("%d pass of %d judged (%s, 95%% CI %.0f-%.0f%%)", o.Pass, o.Judged, rateText(o), 100*o.Low, 100*o.High)
	}
	if o.Pending > 0 {
		text += fmt.Sprintf(", %d pending", o.Pending)
	}
	if o.TaskFaults > 0 {
		text += fmt.Sprintf(", %d task faults", o.TaskFaults)
	}
	return text
}

// printFaults prints the task faults (each task with its reason) and the
// model faults: failed calls by class, and the attempts one ended.
func printFaults(out io.Writer, rep engine.CampaignReport) {
	if len(rep.TaskFaults) > 0 {
		fmt.Fprintf(out, "\ntask faults (%d; the task's own reference failed, never targeted by refinement):\n", len(rep.TaskFaults))
		for _, f := range rep.TaskFaults {
			fmt.Fprintf(out, "  %s  %s: %s\n", f.TaskKey, f.Stage, f.Reason)
		}
	}
	if len(rep.ModelFaults) > 0 {
		fmt.Fprintf(out, "\nmodel faults (failed calls, retried ones included): %s\n", TopClasses(rep.ModelFaults, len(rep.ModelFaults)))
	}
	if fa := rep.FaultedAttempts; fa.Total > 0 {
		fmt.Fprintf(out, "attempts ended by a failed model call: %d (%d kept the class of the answer judged before it, %d model_error)\n",
			fa.Total, fa.KeptClass, fa.Total-fa.KeptClass)
	}
}

// printSpeed prints the kernel-speed table: exec and fast_p with their
// intervals, the geometric-mean speedup and pass@1.
func printSpeed(out io.Writer, speed []refinement.SpeedStats) {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "CATEGORY\tJUDGED\tEXEC\t")
	for _, p := range refinement.FastThresholds {
		fmt.Fprintf(tw, "%s\t", strings.ToUpper(refinement.FastKey(p)))
	}
	fmt.Fprintln(tw, "GEOMEAN SPEEDUP\tPASS@1\t")
	rate := func(r refinement.Rate) string {
		return fmt.Sprintf("%.1f%% [%.0f, %.0f]", 100*r.Rate, 100*r.Low, 100*r.High)
	}
	for _, s := range speed {
		fmt.Fprintf(tw, "%s\t%d\t%s\t", s.Category, s.Judged, rate(s.Exec))
		for _, p := range refinement.FastThresholds {
			fmt.Fprintf(tw, "%s\t", rate(s.Fast[refinement.FastKey(p)]))
		}
		geo := "-" // no correct kernel: no speedup to average
		if s.GeoMeanSpeedup > 0 {
			geo = fmt.Sprintf("%.3gx", s.GeoMeanSpeedup)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t\n", geo, s.PassAtK["1"])
	}
	tw.Flush()
}

func msString(ms int64) string {
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

func printRound(out io.Writer, rr refinement.RoundReport, d engine.RoundRecord) {
	fmt.Fprintf(out, "\nround %d: %d tasks, %s, %d prompt + %d completion tokens\n",
		rr.Round, rr.Overall.Total, outcomeText(rr.Overall), rr.Cost.PromptTokens, rr.Cost.CompletionTokens)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	speed := slices.ContainsFunc(rr.Categories, func(c refinement.Delta) bool { return c.Fast1After != nil || c.Fast1Before != nil })
	fmt.Fprint(tw, "  CATEGORY\tTARGETED\tBEFORE\tAFTER\tLIFT\t95% CI OF LIFT")
	if speed {
		fmt.Fprint(tw, "\tFAST_1 BEFORE\tFAST_1 AFTER")
	}
	fmt.Fprintln(tw)
	for _, c := range rr.Categories {
		before, lift, ci := "-", "-", "-"
		if c.Before != nil {
			before = fmt.Sprintf("r%d %d/%d (%s)", *c.BeforeRound, c.Before.Pass, c.Before.Judged, rateText(*c.Before))
		}
		if c.Lift != nil {
			lift = fmt.Sprintf("%+.1f", 100**c.Lift)
			ci = fmt.Sprintf("[%+.1f, %+.1f]", 100**c.LiftLow, 100**c.LiftHigh)
		}
		tg := ""
		if c.Targeted {
			tg = "yes"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d/%d (%s)\t%s\t%s", c.Category, tg, before, c.After.Pass, c.After.Judged,
			rateText(c.After), lift, ci)
		if speed {
			fmt.Fprintf(tw, "\t%s\t%s", fastText(c.Fast1Before), fastText(c.Fast1After))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(rr.Domains) > 0 {
		var parts []string
		for _, d := range rr.Domains {
			parts = append(parts, fmt.Sprintf("%s %d/%d", d.Category, d.After.Pass, d.After.Judged))
		}
		fmt.Fprintf(out, "  domains: %s\n", strings.Join(parts, ", "))
	}
	if len(rr.Labels) > 0 {
		var parts []string
		for i, l := range rr.Labels {
			if i == 5 {
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d", l.Label, l.Count))
		}
		fmt.Fprintf(out, "  failures: %s\n", strings.Join(parts, ", "))
	}
	switch {
	case d.Stop != "":
		fmt.Fprintf(out, "  stopped after this round: %s\n", d.Stop)
		return
	case d.NextRound == 0:
		return
	}
	fmt.Fprintf(out, "  chosen for round %d:\n", d.NextRound)
	for _, ch := range d.Choices {
		fmt.Fprintf(out, "    %s (%s): %s\n", ch.Category, ch.Kind, ch.Reason)
	}
	for _, s := range d.Synth {
		printSynth(out, s)
	}
	printCarried(out, d)
	cats := make([]string, 0, len(d.Drawn))
	for c := range d.Drawn {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var parts []string
	for _, c := range cats {
		parts = append(parts, fmt.Sprintf("%s %d", c, d.Drawn[c]))
	}
	fmt.Fprintf(out, "  round %d: %d tasks = %d drawn from the corpus (%s) + %d synthesised\n",
		d.NextRound, d.Tasks, d.DrawnTasks, strings.Join(parts, ", "), d.SynthTasks)
}

// printSynth prints one synthesis request of a round: asked, accepted,
// rejected by stage, its cost, and each dropped task with its reason.
func printSynth(out io.Writer, s engine.SynthRecord) {
	nInv, nDup, nParse := 0, 0, 0
	for _, r := range s.Rejected {
		switch r.Stage {
		case engine.RejectInvalid:
			nInv++
		case engine.RejectDuplicate:
			nDup++
		default:
			nParse++
		}
	}
	fmt.Fprintf(out, "  synthesis %s: asked %d, accepted %d, rejected %d (%d unparsable, %d duplicate, %d invalid); %d+%d tokens, %s\n",
		s.Category, s.K, len(s.Accepted), len(s.Rejected), nParse, nDup, nInv, s.PromptTokens, s.CompletionTokens, msString(s.LatencyMS))
	if s.Error != "" {
		fmt.Fprintf(out, "    no reply: %s\n", s.Error)
	}
	for _, r := range s.Rejected {
		fn := ""
		if r.Function != "" {
			fn = " " + r.Function
		}
		fmt.Fprintf(out, "    dropped #%d%s (%s): %s\n", r.Index, fn, r.Stage, truncate(r.Reason, 200))
	}
	for _, r := range s.Pending {
		fmt.Fprintf(out, "    pending #%d %s (waits for a host that can finish its checks): %s\n", r.Index, r.Function, truncate(r.Reason, 200))
	}
}

// printCarried prints the pending candidates of the round before,
// screened again at this transition.
func printCarried(out io.Writer, d engine.RoundRecord) {
	for _, cc := range d.Carried {
		what := cc.Stage
		if cc.Reason != "" {
			what += ": " + truncate(cc.Reason, 200)
		}
		fmt.Fprintf(out, "  carried %s #%d %s (pending since round %d): %s\n", cc.Category, cc.Index, cc.Function, cc.FromRound, what)
	}
}

// fastText is a fast_1 rate with its interval ("-" when not measured).
func fastText(r *refinement.Rate) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%% [%.0f, %.0f]", 100*r.Rate, 100*r.Low, 100*r.High)
}

// WriteFileAtomic writes path through a temp file and a rename.
func WriteFileAtomic(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kiln-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// TopClasses lists the k largest counts of m, "class n" each, largest
// first (ties by name), comma-separated.
func TopClasses(m map[string]int, k int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for c, n := range m {
		l = append(l, kv{c, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || (l[i].v == l[j].v && l[i].k < l[j].k) })
	var parts []string
	for i, x := range l {
		if i == k {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", x.k, x.v))
	}
	return strings.Join(parts, ", ")
}

// WriteCharts writes a campaign report's charts: its refinement series to
// svgPath and, when it has kernel-speed figures, those to the same name
// ending in .speed.svg; written is told of each chart once it is in place
// ("chart", "kernel-speed chart").
func WriteCharts(svgPath string, rep engine.CampaignReport, written func(chart, path string)) error {
	if err := WriteFileAtomic(svgPath, func(w io.Writer) error { return refinement.WriteSVG(w, rep.Refinement.Series) }); err != nil {
		return err
	}
	written("chart", svgPath)
	if len(rep.Speed) == 0 {
		return nil
	}
	speedPath := strings.TrimSuffix(svgPath, ".svg") + ".speed.svg"
	if err := WriteFileAtomic(speedPath, func(w io.Writer) error { return refinement.WriteSpeedSVG(w, rep.Speed) }); err != nil {
		return err
	}
	written("kernel-speed chart", speedPath)
	return nil
}
