package refinement

import (
	"math"
	"sort"

	"github.com/kiln-dev/kiln/runs"
)

// Cost sums what a set of attempts cost.
type Cost struct {
	Attempts         int   `json:"attempts"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	// LatencyMS is summed model latency, WallMS summed attempt wall time.
	LatencyMS int64 `json:"latency_ms"`
	WallMS    int64 `json:"wall_ms"`
}

// costOf reads a stats row's cost.
func costOf(s CategoryStats) Cost {
	return Cost{Attempts: s.Total, PromptTokens: s.PromptTokens, CompletionTokens: s.CompletionTokens,
		ReasoningTokens: s.ReasoningTokens, LatencyMS: s.LatencyMS, WallMS: s.WallMS}
}

// Delta is one category's figures in a round against its latest earlier
// round with judged results.
type Delta struct {
	Category string `json:"category"`
	// BeforeRound and Before are the latest earlier round with judged
	// results in the category; nil when there is none.
	BeforeRound *int           `json:"before_round,omitempty"`
	Before      *CategoryStats `json:"before,omitempty"`
	After       CategoryStats  `json:"after"`
	// Lift is After.PassRate - Before.PassRate, with LiftLow..LiftHigh its
	// 95% interval (Newcombe's method from the two Wilson intervals); nil
	// without a before, or when After has no judged result.
	Lift     *float64 `json:"lift,omitempty"`
	LiftLow  *float64 `json:"lift_ci_low,omitempty"`
	LiftHigh *float64 `json:"lift_ci_high,omitempty"`
	// Targeted: the previous round's selection chose this category.
	Targeted bool `json:"targeted"`
	// Fast1Before and Fast1After are fast_1 (correct, not suspected and
	// faster than the reference: SpeedStats) in the before round and in
	// this one, with their 95% intervals, for lanes whose verdicts measure
	// speed (torch2cuda); nil where the round has no such verdict of the
	// category.
	Fast1Before *Rate `json:"fast_1_before,omitempty"`
	Fast1After  *Rate `json:"fast_1_after,omitempty"`
}

// LabelCount is one fine label's count in a round.
type LabelCount struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}

// RoundReport is one round of a refinement report.
type RoundReport struct {
	Round   int           `json:"round"`
	Overall CategoryStats `json:"overall"`
	// Categories and Features are per task category and per construct
	// feature, sorted by name (no summary rows).
	Categories []Delta `json:"categories"`
	Features   []Delta `json:"features,omitempty"`
	// Domains are per program domain (stored verdict labels, or
	// ReportInput.DomainOf), sorted by name; absent when no result has one.
	Domains []Delta `json:"domains,omitempty"`
	// Labels counts fine failure labels, most frequent first.
	Labels []LabelCount `json:"labels,omitempty"`
	// Chosen are the categories this round's results chose as the next
	// round's targets, with the reasons.
	Chosen []Choice `json:"chosen,omitempty"`
	Cost   Cost     `json:"cost"`
}

// Report is the refinement report of a campaign (for kiln report).
type Report struct {
	Lane   string        `json:"lane"`
	Rounds []RoundReport `json:"rounds"`
	// Series is the pass rate per category across rounds (the chart's
	// data; WriteSVG draws it), the (all) series last.
	Series []Series `json:"series"`
	// Total is the cost of every round.
	Total Cost `json:"total_cost"`
}

// ReportInput is what BuildReport reads.
type ReportInput struct {
	Lane    string
	Results []runs.Result
	// Chosen holds, per round, the choices made from that round's results.
	Chosen map[int][]Choice
	// Lanes holds the lanes' tables (nil: the generic ones).
	Lanes *Lanes
	// NoFeatures leaves per-feature figures out.
	NoFeatures bool
	// DomainOf gives the domain of a result whose verdict has no stored
	// labels (stored before labels were); nil: such results have none.
	DomainOf func(runs.Result) string
}

// BuildReport computes the per-round report of in.Results.
func BuildReport(in ReportInput) Report {
	lanes := in.Lanes.orGeneric()
	tax, feat := lanes.Taxonomy, lanes.Features
	opt := GroupOptions{Taxonomy: tax}
	byCat := StatsByRound(in.Results, ByCategory, opt)
	var byFeat []RoundStats
	if !in.NoFeatures {
		byFeat = StatsByRound(in.Results, ByFeature(feat), GroupOptions{})
	}
	byDomain := StatsByRound(in.Results, ByDomain(in.DomainOf), GroupOptions{})
	hasDomain := false
	for _, rs := range byDomain {
		for _, st := range rs.Stats {
			hasDomain = hasDomain || !isPseudo(st.Category)
		}
	}
	rep := Report{Lane: in.Lane}
	fast1 := fast1ByRound(in.Results)
	prevChosen := map[string]bool{}
	for i, rs := range byCat {
		rr := RoundReport{Round: rs.Round, Chosen: in.Chosen[rs.Round]}
		if all, ok := Find(rs.Stats, AllCategories); ok {
			rr.Overall = all
			rr.Cost = costOf(all)
			for l, n := range all.Labels {
				rr.Labels = append(rr.Labels, LabelCount{l, n})
			}
			sort.Slice(rr.Labels, func(a, b int) bool {
				if rr.Labels[a].Count != rr.Labels[b].Count {
					return rr.Labels[a].Count > rr.Labels[b].Count
				}
				return rr.Labels[a].Label < rr.Labels[b].Label
			})
		}
		rr.Categories = deltas(byCat[:i], rs, prevChosen)
		for k := range rr.Categories {
			d := &rr.Categories[k]
			d.Fast1After = fast1[rs.Round][d.Category]
			if d.BeforeRound != nil {
				d.Fast1Before = fast1[*d.BeforeRound][d.Category]
			}
		}
		if byFeat != nil {
			rr.Features = deltas(byFeat[:i], byFeat[i], prevChosen)
		}
		if hasDomain {
			rr.Domains = deltas(byDomain[:i], byDomain[i], prevChosen)
		}
		rep.Rounds = append(rep.Rounds, rr)
		rep.Total = addCost(rep.Total, rr.Cost)
		prevChosen = map[string]bool{}
		for _, c := range rr.Chosen {
			prevChosen[c.Category] = true
		}
	}
	rep.Series = SeriesOf(byCat)
	return rep
}

// fast1ByRound is fast_1 per round and task category, for the results
// with speed figures (SpeedStatsBy).
func fast1ByRound(results []runs.Result) map[int]map[string]*Rate {
	byRound := map[int][]runs.Result{}
	for _, r := range results {
		byRound[r.Task.Round] = append(byRound[r.Task.Round], r)
	}
	out := map[int]map[string]*Rate{}
	for round, rs := range byRound {
		for _, s := range SpeedStatsBy(rs, ByCategory) {
			if f, ok := s.Fast[FastKey(1)]; ok && !isPseudo(s.Category) {
				if out[round] == nil {
					out[round] = map[string]*Rate{}
				}
				out[round][s.Category] = &f
			}
		}
	}
	return out
}

func addCost(a, b Cost) Cost {
	return Cost{a.Attempts + b.Attempts, a.PromptTokens + b.PromptTokens, a.CompletionTokens + b.CompletionTokens,
		a.ReasoningTokens + b.ReasoningTokens, a.LatencyMS + b.LatencyMS, a.WallMS + b.WallMS}
}

// deltas compares cur's categories with their latest earlier round in
// earlier (rounds in increasing order).
func deltas(earlier []RoundStats, cur RoundStats, targeted map[string]bool) []Delta {
	var out []Delta
	for _, s := range cur.Stats {
		if isPseudo(s.Category) {
			continue
		}
		d := Delta{Category: s.Category, After: s, Targeted: targeted[s.Category]}
		for j := len(earlier) - 1; j >= 0; j-- {
			b, ok := Find(earlier[j].Stats, s.Category)
			if !ok || !b.Rated() {
				continue
			}
			round := earlier[j].Round
			d.BeforeRound, d.Before = &round, &b
			if s.Rated() {
				lift := s.PassRate - b.PassRate
				lo, hi := newcombe(b, s)
				d.Lift, d.LiftLow, d.LiftHigh = &lift, &lo, &hi
			}
			break
		}
		out = append(out, d)
	}
	return out
}

// newcombe returns the 95% interval of after.PassRate - before.PassRate
// from the two Wilson intervals (Newcombe 1998, method 10).
func newcombe(before, after CategoryStats) (lo, hi float64) {
	p1, l1, u1 := before.PassRate, before.Low, before.High
	p2, l2, u2 := after.PassRate, after.Low, after.High
	d := p2 - p1
	lo = d - math.Sqrt((p2-l2)*(p2-l2)+(u1-p1)*(u1-p1))
	hi = d + math.Sqrt((u2-p2)*(u2-p2)+(p1-l1)*(p1-l1))
	return math.Max(lo, -1), math.Min(hi, 1)
}

// Point is one round's pass rate of a series: Pass of Judged (pass and
// fail), out of Total results (pending ones and task faults included).
type Point struct {
	Round    int     `json:"round"`
	Pass     int     `json:"pass"`
	Judged   int     `json:"judged"`
	Total    int     `json:"total"`
	PassRate float64 `json:"pass_rate"`
	Low      float64 `json:"ci_low"`
	High     float64 `json:"ci_high"`
}

// Series is one category's pass rate across rounds.
type Series struct {
	Name   string  `json:"name"`
	Points []Point `json:"points"`
}

// SeriesOf turns per-round statistics into one series per category
// (sorted by name, (all) last, (none) left out), points in round order; a
// round with no judged result in a category has no point.
func SeriesOf(rounds []RoundStats) []Series {
	by := map[string]*Series{}
	for _, rs := range rounds {
		for _, s := range rs.Stats {
			if s.Category == NoGroup || !s.Rated() {
				continue
			}
			se := by[s.Category]
			if se == nil {
				se = &Series{Name: s.Category}
				by[s.Category] = se
			}
			se.Points = append(se.Points, Point{Round: rs.Round, Pass: s.Pass, Judged: s.Judged, Total: s.Total,
				PassRate: s.PassRate, Low: s.Low, High: s.High})
		}
	}
	out := make([]Series, 0, len(by))
	for _, s := range by {
		sort.Slice(s.Points, func(i, j int) bool { return s.Points[i].Round < s.Points[j].Round })
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Name == AllCategories) != (out[j].Name == AllCategories) {
			return out[j].Name == AllCategories
		}
		return out[i].Name < out[j].Name
	})
	return out
}
