package refinement

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/runs"
)

// Labels every lane can produce besides its table's.
const (
	// LabelPass is the label of a passing verdict.
	LabelPass = "pass"
	// LabelSuspectedCheating replaces the label (in [Label.Key]) when the
	// lane's suspicion hook finds the answer sidesteps the task, e.g. an
	// assembly function that prints the expected output itself.
	LabelSuspectedCheating = "suspected_cheating"
	// LabelUnknown is the label of a failing verdict without a class.
	LabelUnknown = "unknown"
)

// Label is the fine failure label of one verdict.
type Label struct {
	// Name is the fine label ("asm.suffix", "crash.segv", "wrong.numeric",
	// ...), LabelPass for a passing verdict.
	Name  string `json:"name"`
	Class string `json:"class,omitempty"`
	Stage string `json:"stage,omitempty"`
	// Evidence is the diagnostic line (or summary) that decided Name.
	Evidence string `json:"evidence,omitempty"`
	// Suspicion says why the answer looks like it sidesteps the task; ""
	// when nothing is suspicious. Set for passing and failing verdicts.
	Suspicion string `json:"suspicion,omitempty"`
}

// Key is the label to count: LabelSuspectedCheating when the answer is
// suspect, else Name.
func (l Label) Key() string {
	if l.Suspicion != "" {
		return LabelSuspectedCheating
	}
	return l.Name
}

func (l Label) String() string {
	if l.Suspicion != "" {
		return fmt.Sprintf("%s (%s; suspected cheating: %s)", l.Key(), l.Name, l.Suspicion)
	}
	return l.Name
}

// Rule maps a failing verdict to a fine label. A rule applies when the
// verdict's class is one of Classes and its stage one of Stages (empty
// lists accept any). A rule has at most one of:
//
//   - Match, which decides on the whole diagnostic (and gives the
//     evidence);
//   - Pattern, an RE2 expression matched case-insensitively against each
//     diagnostic line;
//
// and a rule with neither is a fallback.
//
// Classification walks the applicable rules in table order (the lane's
// table, then the generic one). A run of consecutive Pattern rules is
// tried as a group, line by line: the first diagnostic line that one of
// them matches decides (rules in order on each line), because the first
// error a tool prints is usually the cause of the rest; lines saying
// "error" are scanned before the others, so a warning does not decide,
// and lines quoting source ("    | code") are skipped. A Match rule
// decides alone where it stands. When nothing matched, the first
// applicable fallback gives the label, else the class itself.
type Rule struct {
	Label   string
	Classes []string
	Stages  []string
	Pattern string
	Match   func(diagnostic string) (evidence string, ok bool)
	// Doc says what the label means (for reports and prompts).
	Doc string
}

// SuspectFunc looks at an answer and the task it answers and returns why
// the answer seems to sidestep the task ("" when it does not). The task
// may be partial (Files and Meta empty) when only the lane is known.
type SuspectFunc func(answer string, task runs.Task) string

// LaneTable is the data of one lane's taxonomy.
type LaneTable struct {
	Lane    string
	Rules   []Rule
	Suspect SuspectFunc
}

type compiledRule struct {
	Rule
	re *regexp.Regexp
}

type compiledLane struct {
	rules   []compiledRule
	suspect SuspectFunc
}

// Taxonomy classifies verdicts into fine labels with per-lane tables; the
// generic table follows every lane's own rules and serves unknown lanes.
// It is immutable and safe for concurrent use.
type Taxonomy struct {
	lanes   map[string]*compiledLane
	generic *compiledLane
}

// NewTaxonomy compiles tables. The lane named "" replaces the built-in
// generic table (the class-level rules every lane falls back to).
func NewTaxonomy(tables ...LaneTable) (*Taxonomy, error) {
	t := &Taxonomy{lanes: map[string]*compiledLane{}}
	compile := func(lt LaneTable) (*compiledLane, error) {
		cl := &compiledLane{suspect: lt.Suspect}
		for i, r := range lt.Rules {
			if r.Label == "" {
				return nil, fmt.Errorf("taxonomy %q: rule %d has no label", lt.Lane, i)
			}
			if r.Pattern != "" && r.Match != nil {
				return nil, fmt.Errorf("taxonomy %q: rule %s has both a pattern and a match function", lt.Lane, r.Label)
			}
			cr := compiledRule{Rule: r}
			if r.Pattern != "" {
				re, err := regexp.Compile("(?i)" + r.Pattern)
				if err != nil {
					return nil, fmt.Errorf("taxonomy %q: rule %s: %w", lt.Lane, r.Label, err)
				}
				cr.re = re
			}
			cl.rules = append(cl.rules, cr)
		}
		return cl, nil
	}
	genericSet := false
	for _, lt := range tables {
		cl, err := compile(lt)
		if err != nil {
			return nil, err
		}
		if lt.Lane == "" {
			t.generic, genericSet = cl, true
			continue
		}
		if _, dup := t.lanes[lt.Lane]; dup {
			return nil, fmt.Errorf("taxonomy: lane %q given twice", lt.Lane)
		}
		t.lanes[lt.Lane] = cl
	}
	if !genericSet {
		cl, err := compile(LaneTable{Rules: genericRules()})
		if err != nil {
			return nil, err
		}
		t.generic = cl
	}
	return t, nil
}

// Classify labels v, a verdict of lane for answer.
func (t *Taxonomy) Classify(lane string, v runs.Verdict, answer string) Label {
	return t.classify(runs.Task{Lane: lane}, v, answer)
}

// ClassifyResult labels a result, giving the suspicion hook the task's
// files and metadata (for c2x86: the function's name, and whether the C
// source itself calls printf). A verdict with stored labels
// (runs.Verdict.Labels, written with the verdict) gets its stored label:
// what the tables said when it was judged. Use Labeler to compute afresh.
func (t *Taxonomy) ClassifyResult(r runs.Result) Label {
	if l, ok := StoredLabel(r.Verdict); ok {
		return l
	}
	return t.classify(r.Task, r.Verdict, r.Attempt.Answer)
}

func (t *Taxonomy) classify(task runs.Task, v runs.Verdict, answer string) Label {
	l := Label{Class: v.Class, Stage: v.Stage}
	lane := t.lanes[task.Lane]
	if v.Pass {
		l.Name = LabelPass
	} else {
		l.Name, l.Evidence = t.fine(lane, v)
	}
	if lane != nil && lane.suspect != nil && strings.TrimSpace(answer) != "" {
		l.Suspicion = lane.suspect(answer, task)
	}
	return l
}

// fine finds the fine label of a failing verdict.
func (t *Taxonomy) fine(lane *compiledLane, v runs.Verdict) (name, evidence string) {
	var rules []compiledRule
	if lane != nil {
		rules = append(rules, lane.rules...)
	}
	rules = append(rules, t.generic.rules...)
	applicable := rules[:0:0]
	for _, r := range rules {
		if (len(r.Classes) == 0 || slices.Contains(r.Classes, v.Class)) &&
			(len(r.Stages) == 0 || slices.Contains(r.Stages, v.Stage)) {
			applicable = append(applicable, r)
		}
	}
	// Walk the rules in order: a run of pattern rules is scanned line by
	// line as a group, a Match rule decides alone.
	var group []compiledRule
	flush := func() (string, string, bool) {
		defer func() { group = group[:0] }()
		return scanLines(group, v.Diagnostic)
	}
	for _, r := range applicable {
		switch {
		case r.re != nil:
			group = append(group, r)
		case r.Match != nil:
			if name, ev, ok := flush(); ok {
				return name, ev
			}
			if ev, ok := r.Match(v.Diagnostic); ok {
				return r.Label, clip(ev, 240)
			}
		}
	}
	if name, ev, ok := flush(); ok {
		return name, ev
	}
	for _, r := range applicable {
		if r.Match == nil && r.re == nil {
			return r.Label, clip(firstLine(v.Diagnostic), 240)
		}
	}
	if v.Class == "" {
		return LabelUnknown, clip(firstLine(v.Diagnostic), 240)
	}
	return v.Class, clip(firstLine(v.Diagnostic), 240)
}

// scanLines finds the first diagnostic line a rule of group matches: lines
// saying "error" first, then all; rules in order on each line.
func scanLines(group []compiledRule, diag string) (name, evidence string, ok bool) {
	if len(group) == 0 {
		return "", "", false
	}
	lines := strings.Split(diag, "\n")
	for pass := 0; pass < 2; pass++ {
		for _, line := range lines {
			tl := strings.TrimSpace(line)
			if tl == "" || strings.HasPrefix(tl, "| ") || tl == "|" {
				continue
			}
			if pass == 0 && !strings.Contains(strings.ToLower(tl), "error") {
				continue
			}
			for _, r := range group {
				if r.re.MatchString(line) {
					return r.Label, clip(tl, 240), true
				}
			}
		}
	}
	return "", "", false
}

// Labels returns every label the taxonomy can give a verdict of lane,
// mapped to its documentation (LabelPass, LabelSuspectedCheating and
// LabelUnknown included).
func (t *Taxonomy) Labels(lane string) map[string]string {
	out := map[string]string{
		LabelPass:              "the answer passed",
		LabelSuspectedCheating: "the answer seems to sidestep the task (see the suspicion)",
		LabelUnknown:           "a failure without a class",
	}
	var rules []compiledRule
	if l := t.lanes[lane]; l != nil {
		rules = append(rules, l.rules...)
	}
	rules = append(rules, t.generic.rules...)
	for _, r := range rules {
		if _, ok := out[r.Label]; !ok || out[r.Label] == "" {
			out[r.Label] = r.Doc
		}
	}
	return out
}

// Lanes returns the lanes with their own table, sorted.
func (t *Taxonomy) Lanes() []string {
	out := make([]string, 0, len(t.lanes))
	for l := range t.lanes {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Do not cut a UTF-8 sequence.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}
