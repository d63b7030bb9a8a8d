package refinement

import (
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/runs"
)

// FeatureRule detects one construct in a task's source. The source has
// comments stripped, string and character literals emptied and #include
// lines blanked first (see Features). A rule has a Pattern (RE2, matched
// against the whole prepared source) or a Detect function, not both.
type FeatureRule struct {
	Name    string
	Pattern string
	Detect  func(src *Source) bool
	Doc     string
}

// FeatureTable is the data of one lane's feature detection: which of a
// task's files to read and the rules.
type FeatureTable struct {
	Lane string
	// Files selects the task files to read by name.
	Files func(name string) bool
	// AnswerAs, when set, names the file the model's answer is read as
	// when the task has no matching files (prompt-only lanes such as
	// cuda-synth, whose source is the answer). Used by FeaturesOf.
	AnswerAs string
	Rules    []FeatureRule
	// Prepare, when set, rewrites each file before the C-family lexer
	// reads it (a lane whose sources are not C-like: Python's # comments
	// and // operator); nil keeps them.
	Prepare func(name, body string) string
}

// Source is a task's prepared source as feature rules see it.
type Source struct {
	src *cSource
}

// Code is the prepared text: comments blanked, literals emptied.
func (s *Source) Code() string { return s.src.code }

// StringLiterals is the number of string literals in the original text.
func (s *Source) StringLiterals() int { return s.src.strs }

// Functions returns the names of the functions defined at file scope.
func (s *Source) Functions() []string {
	var out []string
	for _, f := range s.src.functions() {
		out = append(out, f.Name)
	}
	return out
}

// SwitchCaseCounts returns the case-label count of every switch.
func (s *Source) SwitchCaseCounts() []int { return switchCaseCounts(s.src.code) }

// ParseSource prepares C, C++ or CUDA source as feature rules see it:
// comments blanked, string and character literals emptied, #include lines
// blanked.
func ParseSource(src string) *Source { return &Source{src: lexC(src, false)} }

// Defs returns the function definitions at file scope.
func (s *Source) Defs() []CFunc { return s.src.functions() }

// Calls returns the names the code calls (not member calls a.f(), p->f()).
func (s *Source) Calls() map[string]bool { return calledNames(s.src.code) }

// Recursive reports whether a function defined here calls itself,
// directly or through others.
func (s *Source) Recursive() bool { return callGraphHasCycle(s.src.functions()) }

// MatchClose returns the index of the bracket closing the one at open in
// code, or -1.
func MatchClose(code string, open int) int { return matchClose(code, open) }

type compiledFeature struct {
	FeatureRule
	re *regexp.Regexp
}

type compiledFeatureTable struct {
	files    func(string) bool
	answerAs string
	prepare  func(string, string) string
	rules    []compiledFeature
}

// Featurizer finds construct features in task sources with per-lane
// tables. It is immutable and safe for concurrent use.
type Featurizer struct {
	lanes map[string]*compiledFeatureTable
}

// NewFeaturizer compiles tables.
func NewFeaturizer(tables ...FeatureTable) (*Featurizer, error) {
	f := &Featurizer{lanes: map[string]*compiledFeatureTable{}}
	for _, t := range tables {
		if _, dup := f.lanes[t.Lane]; dup {
			return nil, &tableError{t.Lane, "given twice"}
		}
		ct := &compiledFeatureTable{files: t.Files, answerAs: t.AnswerAs, prepare: t.Prepare}
		for _, r := range t.Rules {
			if r.Name == "" || (r.Pattern == "") == (r.Detect == nil) {
				return nil, &tableError{t.Lane, "feature " + r.Name + ": need a name and exactly one of pattern and detect"}
			}
			cf := compiledFeature{FeatureRule: r}
			if r.Pattern != "" {
				re, err := regexp.Compile(r.Pattern)
				if err != nil {
					return nil, &tableError{t.Lane, "feature " + r.Name + ": " + err.Error()}
				}
				cf.re = re
			}
			ct.rules = append(ct.rules, cf)
		}
		f.lanes[t.Lane] = ct
	}
	return f, nil
}

type tableError struct{ lane, msg string }

func (e *tableError) Error() string { return "refinement: table " + e.lane + ": " + e.msg }

// Features returns the sorted features found in the lane's files.
func (f *Featurizer) Features(lane string, files map[string]string) []string {
	t := f.lanes[lane]
	if t == nil {
		return nil
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if t.files == nil || t.files(n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		body := files[n]
		if t.prepare != nil {
			body = t.prepare(n, body)
		}
		b.WriteString(body)
		b.WriteString("\n;\n") // a file boundary ends any declaration
	}
	src := &Source{src: lexC(b.String(), false)}
	var out []string
	for _, r := range t.rules {
		hit := false
		if r.re != nil {
			hit = r.re.MatchString(src.src.code)
		} else {
			hit = r.Detect(src)
		}
		if hit {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return dedupSorted(out)
}

// FeaturesOf returns the features of a result's task: its files, or for
// a lane whose table reads the answer (AnswerAs) and a task without
// matching files, the model's answer. A verdict with stored labels
// (runs.Verdict.Labels) gives its stored features instead.
func (f *Featurizer) FeaturesOf(r runs.Result) []string {
	if l := r.Verdict.Labels; l != nil && l.DiagnosticKind != "" {
		if len(l.Features) == 0 {
			return nil
		}
		return l.Features
	}
	return f.featuresOf(r)
}

// featuresOf is FeaturesOf computed from the result.
func (f *Featurizer) featuresOf(r runs.Result) []string {
	lane := r.Task.Lane
	if out := f.Features(lane, r.Task.Files); out != nil {
		return out
	}
	t := f.lanes[lane]
	if t == nil || t.answerAs == "" || strings.TrimSpace(r.Attempt.Answer) == "" {
		return nil
	}
	for n := range r.Task.Files {
		if t.files == nil || t.files(n) {
			return nil // the task has source; it just has no features
		}
	}
	return f.Features(lane, map[string]string{t.answerAs: r.Attempt.Answer})
}

// FeatureNames returns the features lane's table can report, with their
// documentation.
func (f *Featurizer) FeatureNames(lane string) map[string]string {
	t := f.lanes[lane]
	if t == nil {
		return nil
	}
	out := map[string]string{}
	for _, r := range t.rules {
		if out[r.Name] == "" {
			out[r.Name] = r.Doc
		}
	}
	return out
}

func dedupSorted(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
