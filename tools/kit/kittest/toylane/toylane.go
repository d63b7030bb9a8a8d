// Package toylane is the smallest lane kit there is: the worked example
// of tools/README.md and a fixture of the conformance suite's own test. A
// task is a line of words; the answer is the same words in upper case, in
// a ```text block. It needs no toolchain and no sandbox; it is not
// registered in tools/lanes (registering it is the one line the guide
// shows).
package toylane

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// LaneName is the lane's name in specs.
const LaneName = "toy-upper"

// corpus is the builtin corpus: id -> category and words.
var corpus = []struct{ id, category, words string }{
	{"animals", "short", "cat dog owl"},
	{"colours", "short", "red green blue"},
	{"pangram", "long", "the quick brown fox jumps over the lazy dog"},
	{"numbers", "long", "one two three four five six seven eight nine ten"},
}

// Kit returns the lane's kit.
func Kit() kit.Kit {
	return kit.Kit{
		Name:    LaneName,
		Summary: "words in, the same words in upper case out (the guide's example lane)",
		Open:    func(context.Context, kit.Host, sandboxes.Limits) (tools.Lane, error) { return lane{}, nil },
		Source:  source,
		System: func(_ kit.Tasks, toolNames []string) (string, error) {
			s := "Rewrite the words you are given in upper case. Answer with one ```text block."
			if len(toolNames) > 0 {
				s += " Tools: " + strings.Join(toolNames, ", ") + "."
			}
			return s, nil
		},
		Rules:   rules,
		Example: example,
		Verify:  &kit.VerifyCommand{Usage: "--words W --answer FILE", Flags: verifyFlags},
	}
}

func task(round int, key, category, words string, meta map[string]string) runs.Task {
	return runs.Task{Round: round, Key: key, Lane: LaneName, Categories: []string{category},
		Files: map[string]string{"words.txt": words}, Meta: meta, Prompt: "Words: " + words}
}

func source(t kit.Tasks) (*kit.TaskSet, error) {
	if t.Templates != nil || (t.Corpus != "" && t.Corpus != "builtin") {
		return nil, errors.New("tasks: lane toy-upper has only its builtin corpus")
	}
	ts := &kit.TaskSet{}
	for _, c := range corpus {
		if len(t.Categories) > 0 && !slices.Contains(t.Categories, c.category) {
			continue
		}
		for k := 0; k < max(t.SamplesPerTask, 1); k++ {
			ts.Round0 = append(ts.Round0, task(0, fmt.Sprintf("r0/%s#%d", c.id, k), c.category, c.words, map[string]string{"item": c.id}))
		}
		if !slices.Contains(ts.Known, c.category) {
			ts.Known = append(ts.Known, c.category)
		}
	}
	if len(ts.Round0) == 0 {
		return nil, errors.New("tasks: no item left after the category filter")
	}
	round0 := ts.Round0
	ts.Draw = func(round int, _ map[string]float64) ([]runs.Task, error) {
		var out []runs.Task
		for _, r := range round0 {
			key := strings.Replace(r.Key, "r0/", fmt.Sprintf("r%d/", round), 1)
			out = append(out, task(round, key, r.Categories[0], r.Files["words.txt"], map[string]string{"item": r.Meta["item"], "origin": "resample"}))
		}
		return out, nil
	}
	ts.FromCandidate = func(round int, c refinement.Candidate) ([]runs.Task, error) {
		var out []runs.Task
		for k := 0; k < max(t.SamplesPerTask, 1); k++ {
			tk := c.Task(round, fmt.Sprintf("r%d/synth/%s/%02d#%d", round, c.Category, c.Index, k))
			tk.Prompt = "Words: " + c.Files["words.txt"]
			out = append(out, tk)
		}
		return out, nil
	}
	return ts, nil
}

// lane is the verifier: the answer must be the task's words upper-cased.
type lane struct{}

var _ tools.Lane = lane{}

func (lane) Name() string { return LaneName }

func (lane) Extract(text string) (string, bool) {
	for _, f := range tools.Fences(text) {
		if f.Lang == "" || f.Lang == "text" {
			return strings.TrimSpace(f.Body), true
		}
	}
	return "", false
}

func (lane) Tools(tools.Item) []tools.Tool { return nil }

func (lane) Verify(_ context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	words, ok := item.Files["words.txt"]
	if !ok {
		return tools.Verdict{}, fmt.Errorf("toy-upper: %w: no words.txt", tools.ErrBadItem)
	}
	want := strings.ToUpper(strings.Join(strings.Fields(words), " "))
	got := strings.Join(strings.Fields(answer), " ")
	st := tools.Stage{Name: "compare", OK: got == want}
	if st.OK {
		return tools.Verdict{Pass: true, Stage: "compare", Stages: []tools.Stage{st}}, nil
	}
	st.Detail = fmt.Sprintf("expected %q, got %q", want, got)
	return tools.Verdict{Class: tools.ClassWrongOutput, Stage: "compare", Stages: []tools.Stage{st}, Diagnostic: st.Detail}, nil
}

func rules() (refinement.LaneRules, error) {
	return refinement.LaneRules{
		Lane: LaneName,
		Rules: []refinement.Rule{{Label: "wrong.case", Classes: []string{refinement.ClassWrongOutput}, Pattern: `got "[^"]*[a-z]`,
			Doc: "some letters are still lower case"}},
		// An answer that is the prompt's words unchanged did nothing.
		Suspect: func(answer string, t runs.Task) string {
			if w := t.Files["words.txt"]; w != "" && strings.TrimSpace(answer) == strings.TrimSpace(w) && w != strings.ToUpper(w) {
				return "the answer repeats the words unchanged"
			}
			return ""
		},
		Identity: refinement.Identity{Files: func(n string) bool { return n == "words.txt" }, NoPrompt: true},
		Synth: &refinement.SynthFormat{
			Templates: fstest.MapFS{
				"synth_system.tmpl": {Data: []byte("You write new word lists for category {{.Category}}.")},
				"synth_user.tmpl":   {Data: []byte("Write {{.K}} new word lists of category {{.Category}}, each as a ### TASK block with a ```text block.{{range .Examples}}\nFailed: {{.Diagnostic}}{{end}}")},
			},
			Categories: map[string]string{"short": "three words", "long": "many words"},
			Parse: func(c *refinement.Candidate, b refinement.Block) string {
				for _, f := range b.Code {
					if words := strings.TrimSpace(f.Body); words != "" {
						c.Files = map[string]string{"words.txt": words}
						return ""
					}
				}
				return "no ```text block with words"
			},
			ExampleFile: func(n string) bool { return n == "words.txt" },
			FilesOnly:   true,
		},
	}, nil
}

func example() (kit.Example, error) {
	return kit.Example{
		Tasks: kit.Tasks{Corpus: "builtin", SamplesPerTask: 1}, TaskKey: "r0/animals#0",
		Right: "```text\nCAT DOG OWL\n```", Wrong: "```text\nCAT dog OWL\n```", WrongClass: tools.ClassWrongOutput,
		Cheat: "```text\ncat dog owl\n```",
		Synth: "### TASK 1\ncategory: short\n```text\nant bee elk\n```\n", SynthCategory: "short",
	}, nil
}

func verifyFlags(fs *flag.FlagSet) func() (tools.Item, string, error) {
	words := fs.String("words", "", "the task's words (required)")
	answer := fs.String("answer", "", "a file with the answer (required)")
	return func() (tools.Item, string, error) {
		if *words == "" || *answer == "" {
			return tools.Item{}, "", kit.BadInput("--words and --answer are required")
		}
		b, err := os.ReadFile(*answer)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--answer: %v", err)
		}
		return tools.Item{Lane: LaneName, Files: map[string]string{"words.txt": *words}}, string(b), nil
	}
}
