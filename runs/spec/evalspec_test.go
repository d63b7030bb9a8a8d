package spec

import (
	"strings"
	"testing"
)

func TestEvalOverrides(t *testing.T) {
	t.Parallel()
	src := []byte(`# an eval spec
name: bench
lane: c2x86
tasks: {corpus: builtin, samples_per_task: 1}
models:
  - {name: a, kind: script, script: a.jsonl}
  - {name: b, kind: script, script: b.jsonl}
refinement:
  rounds: 3
  synthesizer: a
`)
	out, err := EvalOverrides{Name: "bench.eval.b", Model: "b", Samples: 4}.Apply(src)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Parse(out, "eval.yaml", Options{Dir: "/specs"})
	if err != nil {
		t.Fatalf("derived spec does not parse: %v\n%s", err, out)
	}
	if sp.Name != "bench.eval.b" || len(sp.Models) != 1 || sp.Models[0].Name != "b" ||
		sp.Refinement.Rounds != 0 || sp.Tasks.SamplesPerTask != 4 {
		t.Errorf("derived spec: name %q models %v rounds %d samples %d\n%s", sp.Name, sp.Models, sp.Refinement.Rounds, sp.Tasks.SamplesPerTask, out)
	}
	if strings.Contains(string(out), "synthesizer") {
		t.Errorf("synthesizer kept:\n%s", out)
	}
	if _, err := (EvalOverrides{Name: "x", Model: "nope"}).Apply(src); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown model: err = %v", err)
	}
}
