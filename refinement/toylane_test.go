package refinement

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kiln-dev/kiln/runs"
)

// toyLane is a test-only lane of C functions (a function.c and a driver.c
// per task, as in c2x86) that the tests of the generic machinery use as
// example data. Refinement knows no real lane: the real lanes' tables,
// features, suspicion checks and synthesis formats are tested in their
// kits (tools/c2x86, tools/cudasynth), and the lanes together in
// lanes_ext_test.go.
const toyLane = "toy-c"

// toyRules is a small LaneRules: one assembler rule of its own, a few C
// features (patterns and a Detect function), function.c as the task's
// identity, and a synthesis format with templates of its own.
func toyRules() LaneRules {
	return LaneRules{
		Lane: toyLane,
		Rules: []Rule{
			{Label: "asm.mnemonic", Classes: []string{ClassAssembleError}, Pattern: `no such instruction`,
				Doc: "an instruction the assembler does not know"},
		},
		Features: &FeatureTable{Files: func(n string) bool { return n == "function.c" || strings.HasSuffix(n, ".h") },
			Rules: []FeatureRule{
				{Name: "if", Pattern: `\bif\s*\(`, Doc: "if statements"},
				{Name: "loop", Pattern: `\b(?:for|while)\s*\(|\bdo\b`, Doc: "any loop"},
				{Name: "loop_for", Pattern: `\bfor\s*\(`, Doc: "for loops"},
				{Name: "goto", Pattern: `\bgoto\b`, Doc: "goto statements"},
				{Name: "switch", Pattern: `\bswitch\s*\(`, Doc: "any switch"},
				{Name: "switch_many", Detect: func(s *Source) bool {
					return slices.ContainsFunc(s.SwitchCaseCounts(), func(n int) bool { return n >= 5 })
				}, Doc: "a switch with 5 or more case labels"},
				{Name: "float_const", Pattern: `(?:^|[^\w.])(?:\d+\.\d*|\.\d+)`, Doc: "floating-point literals"},
				{Name: "float_type", Pattern: `\b(?:float|double)\b`, Doc: "float or double values"},
				{Name: "bitops", Pattern: `<<|>>|~|\^`, Doc: "shifts and other bitwise operators"},
				{Name: "unsigned", Pattern: `\bunsigned\b`, Doc: "unsigned integer types"},
			}},
		Identity: Identity{Files: func(n string) bool { return n == "function.c" }, NoPrompt: true},
		Synth: &SynthFormat{
			Templates: fstest.MapFS{
				"synth_system.tmpl": {Data: []byte("You write C test items for the toy lane.\n")},
				"synth_user.tmpl": {Data: []byte(`Category "{{.Category}}"{{if .Description}}: {{.Description}}{{end}}. Write {{.K}} items.
{{- range $i, $e := .Examples}}
## Example {{add $i 1}} ({{$e.Label}})
{{fence "c" (index $e.Files "function.c")}}
{{- end}}
{{- if .Avoid}}
Avoid: {{join ", " .Avoid}}.
{{- end}}
`)},
			},
			Categories:  map[string]string{"switch_many": "switch statements with 5 or more cases"},
			Parse:       toyParse,
			ExampleFile: func(n string) bool { return n == "function.c" || n == "driver.c" },
			FilesOnly:   true,
		},
	}
}

// toyParse reads a toy task: the function: field and a function.c block.
func toyParse(c *Candidate, b Block) string {
	for _, f := range b.Code {
		if strings.Contains(f.Info, "function.c") {
			c.Function = b.Fields["function"]
			c.Files = map[string]string{"function.c": strings.TrimSpace(f.Body) + "\n"}
			if c.Function == "" {
				return "no function: line"
			}
			return ""
		}
	}
	return "no function.c code block"
}

// toyLanes are the lanes of the tests: the toy lane only.
var toyLanes = func() *Lanes {
	l, err := NewLanes(toyRules())
	if err != nil {
		panic(err)
	}
	return l
}()

func TestNewLanes(t *testing.T) {
	t.Parallel()
	if got := toyLanes.Names(); !slices.Equal(got, []string{toyLane}) {
		t.Errorf("names %v", got)
	}
	if got := toyLanes.Book().Lanes(); !slices.Equal(got, []string{toyLane}) {
		t.Errorf("book lanes %v", got)
	}
	if got := toyLanes.Taxonomy.Lanes(); !slices.Equal(got, []string{toyLane}) {
		t.Errorf("taxonomy lanes %v", got)
	}
	if got := Generic().Names(); len(got) != 0 {
		t.Errorf("generic names %v", got)
	}
	noTemplates := toyRules()
	noTemplates.Synth.Templates = nil
	missing := toyRules()
	missing.Synth.Templates = fstest.MapFS{"synth_system.tmpl": {Data: []byte("x")}}
	badFeature := toyRules()
	badFeature.Features = &FeatureTable{Rules: []FeatureRule{{Name: "a", Pattern: "["}}}
	badRule := toyRules()
	badRule.Rules = []Rule{{Label: "l", Pattern: "("}}
	tests := []struct {
		name  string
		rules []LaneRules
		want  string
	}{
		{"no name", []LaneRules{{}}, "without a lane name"},
		{"twice", []LaneRules{toyRules(), toyRules()}, "given twice"},
		{"no templates", []LaneRules{noTemplates}, "no templates"},
		{"missing template", []LaneRules{missing}, "synth_user.tmpl"},
		{"bad feature", []LaneRules{badFeature}, "missing closing ]"},
		{"bad rule", []LaneRules{badRule}, "missing closing )"},
	}
	for _, tt := range tests {
		if _, err := NewLanes(tt.rules...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
}

// The zero Labeler (and a nil *Lanes) has the generic tables only.
func TestLabelerZeroIsGeneric(t *testing.T) {
	t.Parallel()
	r := synthResult(0, 1, srcSwitch, false, ClassAssembleError, diagMnemonic, "switch_many")
	if got := toyLanes.Labeler().Labels(r, ""); got.DiagnosticKind != "asm.mnemonic" || !slices.Contains(got.Features, "switch_many") {
		t.Errorf("toy labels %+v", got)
	}
	for _, got := range []runs.VerdictLabels{(Labeler{}).Labels(r, ""), (*Lanes)(nil).Labeler().Labels(r, "")} {
		if got.DiagnosticKind != "asm.other" || got.Features == nil || len(got.Features) != 0 {
			t.Errorf("generic labels %+v", got)
		}
	}
}

// The synthesis machinery with the toy lane's format: templates, category
// descriptions (the lane's, else the feature's doc), TASK blocks, hashes.
func TestToyLaneSynth(t *testing.T) {
	t.Parallel()
	ex := Example{Files: map[string]string{"function.c": srcSwitch}, Label: "wrong.numeric"}
	p, err := toyLanes.BuildSynthPrompt(SynthRequest{Lane: toyLane, Category: "switch_many", K: 2, Examples: []Example{ex}, Avoid: []string{"f", "g"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.System != "You write C test items for the toy lane." {
		t.Errorf("system %q", p.System)
	}
	for _, w := range []string{`Category "switch_many": switch statements with 5 or more cases. Write 2 items.`,
		"## Example 1 (wrong.numeric)\n```c\n" + srcSwitch + "\n```", "Avoid: f, g."} {
		if !strings.Contains(p.User, w) {
			t.Errorf("user prompt %q lacks %q", p.User, w)
		}
	}
	p, err = toyLanes.BuildSynthPrompt(SynthRequest{Lane: toyLane, Category: "goto"})
	if err != nil || !strings.HasPrefix(p.User, fmt.Sprintf(`Category "goto": goto statements. Write %d items.`, DefaultK)) {
		t.Errorf("feature category: %q, %v", p.User, err)
	}
	if _, err := toyLanes.BuildSynthPrompt(SynthRequest{Lane: "nope", Category: "x"}); !errors.Is(err, ErrNoSynthLane) {
		t.Errorf("unknown lane: %v", err)
	}
	if _, err := (*Lanes)(nil).BuildSynthPrompt(SynthRequest{Lane: toyLane, Category: "x"}); !errors.Is(err, ErrNoSynthLane) {
		t.Errorf("generic lanes: %v", err)
	}

	reply := "analysis\n### TASK 3\ncategory: goto\nfunction: f\n```c function.c\nint f(int x) { if (x) goto out; return 1; out: return 0; }\n```\n" +
		"```c driver.c\nint f(int);\nint main(void) { return f(0); }\n```\n" +
		"### TASK 3\ncategory: Goto Stuff\nfunction: g\n```c function.c\nint g(void) { return 0; }\n```\n" +
		"### TASK 5\nfunction: h\n```c driver.c\nint main(void) { return 0; }\n```\n" +
		"### TASK 6\nfunction: k\n```c function.c\nint k(void) {\n"
	cands, errs := toyLanes.ParseSynthesized(toyLane, reply)
	if len(cands) != 1 || cands[0].Index != 3 || cands[0].Function != "f" || cands[0].Category != "goto" || cands[0].Lane != toyLane {
		t.Fatalf("candidates %+v, errors %v", cands, errs)
	}
	// The driver and the prompt are not the toy task's identity.
	if h := toyLanes.SourceHash(toyLane, map[string]string{"function.c": "int f(int x) {\n  if (x) goto out;\n  return 1;\nout:\n  return 0;\n}"}, "a prompt"); cands[0].Hash != h {
		t.Errorf("hash %s, want %s", cands[0].Hash, h)
	}
	wantErrs := []string{`task 2: category "goto stuff" is not a label`, "task 5: no function.c code block", "task 6: a code block is not closed"}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors %v, want %v", errs, wantErrs)
	}
	for i, w := range wantErrs {
		if !strings.Contains(errs[i].Error(), w) || !errors.Is(errs[i], ErrRejected) {
			t.Errorf("error %q, want %q", errs[i], w)
		}
	}
	if _, errs := toyLanes.ParseSynthesized("other", reply); len(errs) != 4 || !strings.Contains(errs[0].Error(), `no synthesis format for lane "other"`) {
		t.Errorf("a lane without a format: %v", errs)
	}
}
