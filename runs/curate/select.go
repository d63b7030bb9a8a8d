package curate

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Candidate is one exportable sample as the selection policies see it.
type Candidate struct {
	// ID is the sample's id (its attempt).
	ID string
	// Item is the task the sample answers, the same for every sample and
	// round of it (ItemKey of the task key).
	Item       string
	Round      int
	Categories []string
	// Pending: passed every stage that ran, stages left for another host.
	Pending bool
	// Speedup is the measured speedup over the reference (T_ref/T_new);
	// 0 when the lane measures none.
	Speedup float64
	// Stream is where the sample's kernels run (StreamCurrent or
	// StreamOther); "" when the lane measures none.
	Stream string
	// Reasoning is the reasoning length in tokens (ReasoningLength).
	Reasoning int
	// Answer is the answer's length in bytes.
	Answer int
	// Order is the sample's position in the campaign: the last tie-break.
	Order int
}

// Better reports whether a is the better sample of the two: verified
// before pending, then faster, then shorter reasoning, then shorter
// answer, then earlier. It is the order that picks the kept sample of a
// near-duplicate cluster and the best sample of a task.
func Better(a, b *Candidate) bool {
	switch {
	case a.Pending != b.Pending:
		return !a.Pending
	case a.Speedup != b.Speedup:
		return a.Speedup > b.Speedup
	case a.Reasoning != b.Reasoning:
		return a.Reasoning < b.Reasoning
	case a.Answer != b.Answer:
		return a.Answer < b.Answer
	}
	return a.Order < b.Order
}

var itemRE = regexp.MustCompile(`^r[0-9]+/(.*?)(#[0-9]+)?$`)

// ItemKey is the task a task key names, without its round prefix ("r2/")
// and sample suffix ("#3"): the samples of one problem, in every round,
// share it. Keys of another shape are their own item.
func ItemKey(taskKey string) string {
	if m := itemRE.FindStringSubmatch(taskKey); m != nil && m[1] != "" {
		return m[1]
	}
	return taskKey
}

// Policy names a selection policy.
type Policy string

// The selection policies.
const (
	// AllVerified keeps every sample that survives deduplication and the
	// contamination check.
	AllVerified Policy = "all-verified"
	// BestPerTask keeps the best sample of each task (Better).
	BestPerTask Policy = "best-per-task"
	// Concur is ConCuR's curation (seed 001, section 3.5): per task, the
	// sample with the shortest reasoning when it is also the fastest;
	// every sample faster than Selection.KeepSpeedup; then single-operator
	// and fusion tasks balanced to Selection.SingleShare.
	Concur Policy = "concur"
)

// Policies lists the policies by name.
var Policies = []Policy{AllVerified, BestPerTask, Concur}

// ParsePolicy checks a policy name.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(s)
	if slices.Contains(Policies, p) {
		return p, nil
	}
	names := make([]string, len(Policies))
	for i, q := range Policies {
		names[i] = string(q)
	}
	return "", fmt.Errorf("selection policy %q: want one of %s", s, strings.Join(names, ", "))
}

// Selection is a policy with its settings.
type Selection struct {
	Policy Policy
	// KeepSpeedup: concur keeps every sample whose speedup is above it
	// (ConCuR part b; default 5).
	KeepSpeedup float64
	// SingleShare is concur's target fraction of single-operator samples
	// among the kept ones (ConCuR part c); 0 leaves the mix as it is.
	// Balancing adds the best unselected samples of the scarce kind, one
	// task at a time, and only when they run out drops the weakest of the
	// plentiful kind. Nothing is balanced unless both kinds are present.
	SingleShare float64
	// Fusion reports whether a task is a fusion (several operators or a
	// network) rather than a single operator; nil means IsFusion.
	Fusion func(categories []string) bool
	// MinSpeedup, when above 0, admits only samples with a measured
	// speedup of at least it (every policy; 0, the default, admits
	// correct samples however slow; 1 keeps those no slower than the
	// reference). Samples without a speedup (Speedup 0) are left out.
	MinSpeedup float64
	// Stream is the stream policy (StreamAny by default).
	Stream StreamPolicy
}

// Admit reports why c is left out before deduplication and selection
// (ExcludeSlow, ExcludeStream), or "" when it takes part.
func (s Selection) Admit(c *Candidate) string {
	switch {
	case s.MinSpeedup > 0 && c.Speedup < s.MinSpeedup:
		return ExcludeSlow
	case s.Stream == StreamRequire && c.Stream != StreamCurrent:
		return ExcludeStream
	}
	return ""
}

// Better is the package's Better, with current-stream samples first
// when the stream policy prefers or requires them.
func (s Selection) Better(a, b *Candidate) bool {
	if s.Stream != StreamAny && (a.Stream == StreamCurrent) != (b.Stream == StreamCurrent) && a.Pending == b.Pending {
		return a.Stream == StreamCurrent
	}
	return Better(a, b)
}

// Stream findings of a Candidate (from a verdict's "stream_current"
// measurement, 1 or 0).
const (
	// StreamCurrent: the kernels run on the framework's current stream.
	StreamCurrent = "current"
	// StreamOther: they run elsewhere and are still correct (the legacy
	// default stream, in the setting where it is the current stream).
	StreamOther = "other"
)

// StreamPolicy says how a selection treats Candidate.Stream.
type StreamPolicy string

// The stream policies.
const (
	// StreamAny ("", the default) ignores where the kernels run.
	StreamAny StreamPolicy = ""
	// StreamPrefer ranks current-stream samples first (Selection.Better):
	// the kept sample of a near-duplicate cluster and a task's best.
	StreamPrefer StreamPolicy = "prefer"
	// StreamRequire admits only samples measured on the current stream;
	// samples without the measurement (other lanes, pending ones) are
	// left out too.
	StreamRequire StreamPolicy = "require"
)

// StreamPolicies lists the stream policies by name ("any" is StreamAny).
var StreamPolicies = []string{"any", string(StreamPrefer), string(StreamRequire)}

// ParseStreamPolicy checks a stream policy name ("" and "any" are
// StreamAny).
func ParseStreamPolicy(s string) (StreamPolicy, error) {
	switch s {
	case "", "any":
		return StreamAny, nil
	case string(StreamPrefer), string(StreamRequire):
		return StreamPolicy(s), nil
	}
	return "", fmt.Errorf("stream policy %q: want one of %s", s, strings.Join(StreamPolicies, ", "))
}

// Why a sample is not admitted to selection (Selection.Admit).
const (
	ExcludeSlow   = "below-min-speedup"
	ExcludeStream = "not-current-stream"
)

// DefaultKeepSpeedup is concur's default KeepSpeedup.
const DefaultKeepSpeedup = 5

// Validate checks s.
func (s Selection) Validate() error {
	if _, err := ParsePolicy(string(s.Policy)); err != nil {
		return err
	}
	if s.KeepSpeedup < 0 || math.IsNaN(s.KeepSpeedup) {
		return fmt.Errorf("keep speedup %g: want >= 0", s.KeepSpeedup)
	}
	if s.SingleShare < 0 || s.SingleShare >= 1 || math.IsNaN(s.SingleShare) {
		return fmt.Errorf("single share %g: want [0, 1)", s.SingleShare)
	}
	if s.MinSpeedup < 0 || math.IsNaN(s.MinSpeedup) || math.IsInf(s.MinSpeedup, 0) {
		return fmt.Errorf("min speedup %g: want >= 0", s.MinSpeedup)
	}
	if _, err := ParseStreamPolicy(string(s.Stream)); err != nil || s.Stream == "any" {
		return fmt.Errorf("stream policy %q: want \"\" (any), %s or %s", s.Stream, StreamPrefer, StreamRequire)
	}
	return nil
}

// fusionCategories mark a task of several operators: the torch2cuda op
// families fusion and network, and KernelBench's levels 2 and 3.
var fusionCategories = []string{"fusion", "network", "level2", "level3"}

// IsFusion is the default Selection.Fusion: a task labelled fusion,
// network, level2 or level3.
func IsFusion(categories []string) bool {
	for _, c := range categories {
		if slices.Contains(fusionCategories, c) {
			return true
		}
	}
	return false
}

// Why a sample is kept.
const (
	KeptAll      = "all-verified"
	KeptBest     = "best-per-task"
	KeptConcise  = "concur-shortest-fastest" // ConCuR part a
	KeptFast     = "concur-speedup"          // ConCuR part b
	KeptBalance  = "concur-balance"          // ConCuR part c
	DropPolicy   = "policy"                  // not chosen by the policy
	DropBalanced = "balance"                 // dropped to reach the share
)

// Select applies the policy to cands (the samples left after
// deduplication) and returns, for each, why it is kept, or "" when it is
// not. It is deterministic: the same candidates give the same answer in
// any order.
func (s Selection) Select(cands []Candidate) ([]string, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	keep := make([]string, len(cands))
	// Samples Admit leaves out take no part (callers may have left them
	// out already, counting why).
	admitted := make([]Candidate, 0, len(cands))
	index := make([]int, 0, len(cands))
	for i := range cands {
		if s.Admit(&cands[i]) == "" {
			admitted = append(admitted, cands[i])
			index = append(index, i)
		}
	}
	if len(admitted) < len(cands) {
		sub, err := s.Select(admitted)
		if err != nil {
			return nil, err
		}
		for j, why := range sub {
			keep[index[j]] = why
		}
		return keep, nil
	}
	switch s.Policy {
	case AllVerified:
		for i := range keep {
			keep[i] = KeptAll
		}
		return keep, nil
	case BestPerTask:
		for _, g := range s.groupByItem(cands) {
			keep[g[0]] = KeptBest
		}
		return keep, nil
	}
	// concur
	for _, g := range s.groupByItem(cands) {
		short, fastest := g[0], 0.0
		for _, i := range g {
			c := &cands[i]
			fastest = max(fastest, c.Speedup)
			if sc := &cands[short]; c.Reasoning < sc.Reasoning || (c.Reasoning == sc.Reasoning && s.Better(c, sc)) {
				short = i
			}
		}
		if cands[short].Speedup >= fastest {
			keep[short] = KeptConcise
		}
	}
	for i := range cands {
		if keep[i] == "" && cands[i].Speedup > s.KeepSpeedup {
			keep[i] = KeptFast
		}
	}
	if s.SingleShare > 0 {
		s.balance(cands, keep)
	}
	return keep, nil
}

// groupByItem returns the candidates' indices by item, each group best
// first (s.Better), the groups in the order of their items.
func (s Selection) groupByItem(cands []Candidate) [][]int {
	by := map[string][]int{}
	var items []string
	for i, c := range cands {
		if _, ok := by[c.Item]; !ok {
			items = append(items, c.Item)
		}
		by[c.Item] = append(by[c.Item], i)
	}
	sort.Strings(items)
	out := make([][]int, 0, len(items))
	for _, it := range items {
		g := by[it]
		sort.Slice(g, func(a, b int) bool { return s.Better(&cands[g[a]], &cands[g[b]]) })
		out = append(out, g)
	}
	return out
}

// balance moves the kept mix of single-operator and fusion samples
// towards s.SingleShare (see Selection.SingleShare).
func (s Selection) balance(cands []Candidate, keep []string) {
	fusion := s.Fusion
	if fusion == nil {
		fusion = IsFusion
	}
	isF := make([]bool, len(cands))
	nS, nF := 0, 0
	for i := range cands {
		isF[i] = fusion(cands[i].Categories)
		if keep[i] != "" {
			if isF[i] {
				nF++
			} else {
				nS++
			}
		}
	}
	if nS == 0 || nF == 0 {
		return
	}
	share := s.SingleShare
	// The scarce kind and how many of it the share asks for.
	scarceF := float64(nS)/float64(nS+nF) > share
	have, other := nS, nF
	if scarceF {
		have, other = nF, nS
		share = 1 - share
	}
	want := int(math.Ceil(share*float64(other)/(1-share) - 1e-9))
	if want <= have {
		return
	}
	// Add the scarce kind: first the best unselected sample of each task
	// with none kept yet, then the rest, best first.
	var first, rest []int
	keptItem := map[string]bool{}
	for i := range cands {
		if keep[i] != "" {
			keptItem[cands[i].Item] = true
		}
	}
	for _, g := range s.groupByItem(cands) {
		for _, i := range g {
			switch {
			case keep[i] != "" || isF[i] != scarceF:
			case !keptItem[cands[i].Item]:
				first = append(first, i)
				keptItem[cands[i].Item] = true
			default:
				rest = append(rest, i)
			}
		}
	}
	byBetter := func(l []int) {
		sort.SliceStable(l, func(a, b int) bool { return s.Better(&cands[l[a]], &cands[l[b]]) })
	}
	byBetter(first)
	byBetter(rest)
	for _, i := range append(first, rest...) {
		if have >= want {
			break
		}
		keep[i] = KeptBalance
		have++
	}
	if have >= want {
		return
	}
	// Not enough of the scarce kind: drop the weakest of the plentiful
	// kind, concise picks before fast ones.
	limit := int(math.Floor(float64(have) * (1 - share) / share))
	var plenty []int
	for i := range cands {
		if keep[i] != "" && isF[i] != scarceF {
			plenty = append(plenty, i)
		}
	}
	sort.SliceStable(plenty, func(a, b int) bool {
		ka, kb := keep[plenty[a]] == KeptFast, keep[plenty[b]] == KeptFast
		if ka != kb {
			return ka
		}
		return s.Better(&cands[plenty[a]], &cands[plenty[b]])
	})
	for _, i := range plenty[min(limit, len(plenty)):] {
		keep[i] = ""
	}
}

// Tiers divide tasks by their average reasoning length (ARL) in tokens,
// ConCuR section 4.4: easy below Easy, hard above Hard, medium between.
type Tiers struct {
	Easy, Hard float64
}

// DefaultTiers are ConCuR's thresholds (Table 6): 4000 and 8500 tokens.
func DefaultTiers() Tiers { return Tiers{Easy: 4000, Hard: 8500} }

// Validate checks t.
func (t Tiers) Validate() error {
	if t.Easy <= 0 || t.Hard < t.Easy {
		return fmt.Errorf("difficulty tiers %g, %g: want 0 < easy <= hard", t.Easy, t.Hard)
	}
	return nil
}

// Label is the tier of a task with average reasoning length arl:
// "easy", "medium", "hard", or "unknown" when no sample of the task
// carried reasoning.
func (t Tiers) Label(arl float64) string {
	switch {
	case arl <= 0:
		return "unknown"
	case arl < t.Easy:
		return "easy"
	case arl > t.Hard:
		return "hard"
	}
	return "medium"
}

// ARL accumulates the average reasoning length of each task over its
// samples (every judged sample, passing or not).
type ARL struct {
	sum map[string]float64
	n   map[string]int
}

// NewARL returns an empty accumulator.
func NewARL() *ARL { return &ARL{sum: map[string]float64{}, n: map[string]int{}} }

// Add counts one sample of item with the given reasoning length.
func (a *ARL) Add(item string, reasoning int) {
	a.sum[item] += float64(reasoning)
	a.n[item]++
}

// Mean is item's average reasoning length (0 when it has no samples).
func (a *ARL) Mean(item string) float64 {
	if a.n[item] == 0 {
		return 0
	}
	return a.sum[item] / float64(a.n[item])
}
