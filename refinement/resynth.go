package refinement

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/kiln-dev/kiln/runs"
)

// ErrNoSynthLane means there are no resynthesis templates for a lane.
var ErrNoSynthLane = errors.New("refinement: no resynthesis templates for lane")

// DefaultK is how many new tasks a resynthesis prompt asks for: the seed
// paper's "ten times more similar samples".
const DefaultK = 10

// Example is one failing task shown to the synthesiser.
type Example struct {
	TaskKey string `json:"task_key"`
	// Files are the task's source files the lane shows (c2x86: function.c
	// and driver.c), each shortened to ExampleOptions.MaxSourceChars.
	Files map[string]string `json:"files,omitempty"`
	// Prompt is the task's prompt, for prompt-only lanes (shortened).
	Prompt string `json:"prompt,omitempty"`
	// Answer is the model's wrong answer, shortened.
	Answer string `json:"answer,omitempty"`
	Class  string `json:"class,omitempty"`
	// Label is the fine failure label and LabelDoc what it means.
	Label    string `json:"label,omitempty"`
	LabelDoc string `json:"label_doc,omitempty"`
	// Diagnostic is the verifier's diagnosis, shortened.
	Diagnostic string `json:"diagnostic,omitempty"`
}

// ExampleOptions bound ExamplesFor.
type ExampleOptions struct {
	// Max is the number of examples (default 3).
	Max int
	// MaxAnswerChars, MaxSourceChars and MaxDiagnosticChars shorten the
	// texts (defaults 3000, 4000, 1500).
	MaxAnswerChars, MaxSourceChars, MaxDiagnosticChars int
	// Lanes labels the failures, decides feature membership for
	// categories that are features rather than task categories, and says
	// which task files are shown (nil: the generic tables, no files).
	Lanes *Lanes
}

func (o ExampleOptions) withDefaults() ExampleOptions {
	if o.Max <= 0 {
		o.Max = 3
	}
	if o.MaxAnswerChars <= 0 {
		o.MaxAnswerChars = 3000
	}
	if o.MaxSourceChars <= 0 {
		o.MaxSourceChars = 4000
	}
	if o.MaxDiagnosticChars <= 0 {
		o.MaxDiagnosticChars = 1500
	}
	o.Lanes = o.Lanes.orGeneric()
	return o
}

// ExamplesFor picks failing results of category (a task category or a
// construct feature) to show the synthesiser: model and internal errors
// are skipped (they say nothing about the task), and so are task faults
// (the task's own reference failed) and pending results; the picks go round
// robin over fine labels (sorted) so that different failure kinds are
// shown, each label's results in task-key order. Distinct tasks (by
// TaskHash: samples of one task are one task) come first; a task is shown
// again only when no other is left and its answer or diagnostic differs
// from every example shown. Deterministic.
func ExamplesFor(results []runs.Result, category string, opt ExampleOptions) []Example {
	opt = opt.withDefaults()
	byLabel := map[string][]runs.Result{}
	labels := map[string]Label{}
	for _, r := range results {
		if r.Verdict.Outcome() != runs.OutcomeFail || r.Verdict.Class == ClassModelError || r.Verdict.Class == ClassInternal {
			continue
		}
		if !hasString(r.Task.Categories, category) && !hasString(opt.Lanes.Features.FeaturesOf(r), category) {
			continue
		}
		l := opt.Lanes.Taxonomy.ClassifyResult(r)
		byLabel[l.Key()] = append(byLabel[l.Key()], r)
		labels[r.Task.ID+"\x00"+r.Task.Key] = l
	}
	keys := make([]string, 0, len(byLabel))
	for k, rs := range byLabel {
		keys = append(keys, k)
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].Task.Key != rs[j].Task.Key {
				return rs[i].Task.Key < rs[j].Task.Key
			}
			return rs[i].Task.ID < rs[j].Task.ID
		})
	}
	sort.Strings(keys)
	var out []Example
	shownTask, shownPair := map[string]bool{}, map[string]bool{}
	perLabel := map[string]int{}
	for pass := 0; pass < 2 && len(out) < opt.Max; pass++ {
		// Labels with fewer examples so far go first.
		order := slices.Clone(keys)
		sort.SliceStable(order, func(i, j int) bool { return perLabel[order[i]] < perLabel[order[j]] })
		next := map[string]int{} // per label: the next result to look at
		for added := true; added && len(out) < opt.Max; {
			added = false
			for _, k := range order {
				rs := byLabel[k]
				for len(out) < opt.Max && next[k] < len(rs) {
					r := rs[next[k]]
					next[k]++
					th := opt.Lanes.TaskHash(r.Task)
					pair := th + "\x00" + r.Attempt.Answer + "\x00" + r.Verdict.Diagnostic
					if shownPair[pair] || (pass == 0 && shownTask[th]) {
						continue
					}
					shownTask[th], shownPair[pair] = true, true
					perLabel[k]++
					out = append(out, makeExample(r, labels[r.Task.ID+"\x00"+r.Task.Key], opt))
					added = true
					break
				}
			}
		}
	}
	return out
}

func makeExample(r runs.Result, l Label, opt ExampleOptions) Example {
	e := Example{
		TaskKey:    r.Task.Key,
		Prompt:     shorten(r.Task.Prompt, opt.MaxSourceChars),
		Answer:     shorten(r.Attempt.Answer, opt.MaxAnswerChars),
		Class:      r.Verdict.Class,
		Label:      l.Key(),
		Diagnostic: shorten(r.Verdict.Diagnostic, opt.MaxDiagnosticChars),
	}
	doc := opt.Lanes.Taxonomy.Labels(r.Task.Lane)
	e.LabelDoc = doc[l.Name]
	if l.Suspicion != "" {
		e.LabelDoc = l.Suspicion
	}
	for name, src := range r.Task.Files {
		if opt.Lanes.exampleFile(r.Task.Lane, name) {
			if e.Files == nil {
				e.Files = map[string]string{}
			}
			e.Files[name] = shorten(src, opt.MaxSourceChars)
		}
	}
	if len(e.Files) > 0 && opt.Lanes.filesOnly(r.Task.Lane) {
		e.Prompt = "" // the files say it all
	}
	return e
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shorten cuts s to about n bytes at a line end and says how much was cut.
func shorten(s string, n int) string {
	s = strings.TrimRight(s, " \t\r\n")
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		cut = cut[:i]
	}
	for len(cut) > 0 && cut[len(cut)-1]&0xC0 == 0x80 {
		cut = cut[:len(cut)-1]
	}
	return fmt.Sprintf("%s\n... (%d more characters)", cut, len(s)-len(cut))
}

// SynthRequest asks for new tasks of one category.
type SynthRequest struct {
	Lane     string
	Category string
	// Description says what the category means; "" takes the lane's
	// description (SynthFormat.Categories, else the feature's doc).
	Description string
	// K is how many new tasks to ask for (DefaultK when <= 0).
	K        int
	Examples []Example
	// Avoid lists names the new tasks must not use (existing functions).
	Avoid []string
	// Briefs are the persona variables of each task asked for (the
	// lane's SynthFormat.Vary fills them when nil); templates may show
	// them.
	Briefs []map[string]string
}

// SynthPrompt is a rendered resynthesis prompt.
type SynthPrompt struct {
	System string `json:"system"`
	User   string `json:"user"`
}

// PromptBook holds the resynthesis templates and category descriptions.
// It is immutable and safe for concurrent use.
type PromptBook struct {
	lanes        map[string]*template.Template
	descriptions map[string]map[string]string
	vary         map[string]func(SynthRequest) []map[string]string
	features     *Featurizer
}

// newPromptBook parses the lanes' resynthesis templates.
func newPromptBook(rs []LaneRules, features *Featurizer) (*PromptBook, error) {
	b := &PromptBook{lanes: map[string]*template.Template{}, descriptions: map[string]map[string]string{},
		vary: map[string]func(SynthRequest) []map[string]string{}, features: features}
	for _, r := range rs {
		if r.Synth == nil {
			continue
		}
		if r.Synth.Templates == nil {
			return nil, fmt.Errorf("refinement prompts: lane %s: no templates", r.Lane)
		}
		b.descriptions[r.Lane] = r.Synth.Categories
		if r.Synth.Vary != nil {
			b.vary[r.Lane] = r.Synth.Vary
		}
		t := template.New(r.Lane).Funcs(templateFuncs()).Option("missingkey=error")
		for _, name := range []string{"synth_system.tmpl", "synth_user.tmpl"} {
			raw, err := fs.ReadFile(r.Synth.Templates, name)
			if err != nil {
				return nil, fmt.Errorf("refinement prompts: lane %s: %w", r.Lane, err)
			}
			if _, err := t.New(name).Parse(string(raw)); err != nil {
				return nil, fmt.Errorf("refinement prompts: %s/%s: %w", r.Lane, name, err)
			}
		}
		b.lanes[r.Lane] = t
	}
	return b, nil
}

// Lanes returns the lanes the book has templates for, sorted.
func (b *PromptBook) Lanes() []string {
	out := make([]string, 0, len(b.lanes))
	for l := range b.lanes {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// Description returns the built-in description of a category.
func (b *PromptBook) Description(lane, category string) string {
	if d := b.descriptions[lane][category]; d != "" {
		return d
	}
	return b.features.FeatureNames(lane)[category]
}

// Build renders the prompt for req.
func (b *PromptBook) Build(req SynthRequest) (SynthPrompt, error) {
	t := b.lanes[req.Lane]
	if t == nil {
		return SynthPrompt{}, fmt.Errorf("%w %q", ErrNoSynthLane, req.Lane)
	}
	if strings.TrimSpace(req.Category) == "" {
		return SynthPrompt{}, errors.New("refinement prompts: no category")
	}
	if req.K <= 0 {
		req.K = DefaultK
	}
	if req.Description == "" {
		req.Description = b.Description(req.Lane, req.Category)
	}
	if v := b.vary[req.Lane]; v != nil && req.Briefs == nil {
		req.Briefs = v(req)
	}
	for i := range req.Examples {
		if req.Examples[i].Files == nil {
			req.Examples[i].Files = map[string]string{}
		}
	}
	var sys, user bytes.Buffer
	if err := t.ExecuteTemplate(&sys, "synth_system.tmpl", req); err != nil {
		return SynthPrompt{}, fmt.Errorf("refinement prompts: %w", err)
	}
	if err := t.ExecuteTemplate(&user, "synth_user.tmpl", req); err != nil {
		return SynthPrompt{}, fmt.Errorf("refinement prompts: %w", err)
	}
	return SynthPrompt{System: strings.TrimSpace(sys.String()), User: strings.TrimSpace(user.String())}, nil
}

func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"add":   func(a, b int) int { return a + b },
		"join":  func(sep string, s []string) string { return strings.Join(s, sep) },
		"fence": fence,
	}
}

// fence wraps s in a code fence longer than any backtick run inside it.
func fence(lang, s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// ExistingFunctions returns the sorted, distinct Meta["function"] names of
// tasks (to pass as SynthRequest.Avoid), at most limit of them (0: all).
func ExistingFunctions(tasks []runs.Task, limit int) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tasks {
		if f := t.Meta["function"]; f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
