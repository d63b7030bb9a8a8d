package spec

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

var lanes = Options{Lanes: []string{"c2x86", "cuda-synth"}}

func TestExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		check func(t *testing.T, s *Spec)
	}{
		{"openai.yaml", func(t *testing.T, s *Spec) {
			m := s.Models[0]
			if m.Kind != KindOpenAI || m.BaseURL != "http://127.0.0.1:8000/v1" || m.Concurrency != 4 || m.Timeout.D() != 10*time.Minute {
				t.Errorf("model = %+v", m)
			}
			if m.Think == nil || *m.Think {
				t.Errorf("think = %v, want explicit false", m.Think)
			}
			if *s.Sampling.Temperature != 0.2 || *s.Sampling.TopP != 0.95 || *s.Sampling.Seed != 0 {
				t.Errorf("sampling = %+v", s.Sampling)
			}
			if got := s.Sampling.Agent(); got.MaxTokens != 4096 || *got.Temperature != 0.2 {
				t.Errorf("agent sampling = %+v", got)
			}
			if s.Sandbox.CPUTime.D() != 5*time.Second || s.Retry.BaseDelay.D() != 500*time.Millisecond {
				t.Errorf("sandbox/retry = %+v %+v", s.Sandbox, s.Retry)
			}
			if s.Tasks.Corpus != "builtin" || !slices.Equal(s.Tasks.Categories, []string{"switch_many"}) {
				t.Errorf("tasks = %+v", s.Tasks)
			}
			if s.Refinement.Rounds != 2 || s.Refinement.Synthesizer != "local" {
				t.Errorf("refinement = %+v", s.Refinement)
			}
		}},
		{"ollama.yaml", func(t *testing.T, s *Spec) {
			m := s.Models[0]
			if m.BaseURL != DefaultOllamaURL || m.NumCtx != 16384 || m.Concurrency != 1 || m.Tools != ToolsText {
				t.Errorf("model = %+v", m)
			}
			if m.KeepAlive == nil || m.KeepAlive.D() != 30*time.Minute {
				t.Errorf("keep_alive = %v", m.KeepAlive)
			}
			if s.Budgets.WallTime.D() != 8*time.Hour || s.Tasks.Limit != 50 || s.Tasks.Corpus != "builtin" {
				t.Errorf("budgets/tasks = %+v %+v", s.Budgets, s.Tasks)
			}
			if s.Sampling.TopP != nil || s.Sampling.Seed != nil {
				t.Errorf("unset sampling fields should stay nil: %+v", s.Sampling)
			}
			if s.Refinement.Synthesizer != "laptop" {
				t.Errorf("synthesizer default = %q, want the first model", s.Refinement.Synthesizer)
			}
		}},
		{"langchain.yaml", func(t *testing.T, s *Spec) {
			if want := filepath.Join("testdata", "corpus", "c2x86"); s.Tasks.Corpus != want {
				t.Errorf("corpus = %q, want %q (resolved against the spec's folder)", s.Tasks.Corpus, want)
			}
			m, ok := s.Model("claude")
			if !ok || m.Provider != "anthropic" || m.APIKeyEnv != "ANTHROPIC_API_KEY" || m.BaseURL != "" {
				t.Errorf("claude = %+v", m)
			}
			if s.Budgets.Tokens != 20_000_000 || s.Refinement.Synthesizer != "vllm" {
				t.Errorf("budgets/refinement = %+v %+v", s.Budgets, s.Refinement)
			}
		}},
		{"script.yaml", func(t *testing.T, s *Spec) {
			m := s.Models[0]
			if m.Script != filepath.Join("testdata", "answers.jsonl") || m.Latency.D() != 250*time.Millisecond || m.Model != "" {
				t.Errorf("model = %+v", m)
			}
		}},
		{"templates.yaml", func(t *testing.T, s *Spec) {
			tp := s.Tasks.Templates
			if s.Tasks.Corpus != "" || tp == nil || tp.Dir != filepath.Join("testdata", "templates") {
				t.Fatalf("tasks = %+v", s.Tasks)
			}
			if got := tp.Pools["operation"]; !slices.Equal(got, []string{"reduction", "stencil", "scan"}) {
				t.Errorf("pool = %q", got)
			}
			if s.Tasks.Seed != 42 || s.Tasks.SamplesPerTask != 2 {
				t.Errorf("tasks = %+v", s.Tasks)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			s, err := Load(filepath.Join("testdata", tt.file), lanes)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, s)
			// Every example also passes Validate again and round-trips
			// through yaml.Marshal.
			if err := s.Validate(lanes); err != nil {
				t.Errorf("Validate after Load: %v", err)
			}
			out, err := yaml.Marshal(s)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if _, err := Parse(out, "", lanes); err != nil {
				t.Errorf("re-Parse of marshalled spec: %v\n%s", err, out)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"empty file", "", []string{"campaign.yaml: spec is empty"}},
		{"only a comment", "# nothing\n", []string{"campaign.yaml: spec is empty"}},
		{"not a mapping", "- a\n- b\n", []string{"campaign.yaml:1: spec must be a mapping, got a list"}},
		{"yaml syntax error", `name: x
lane: c2x86
models:
  - name: a
   kind: openai
`, []string{"campaign.yaml:3: yaml: did not find expected '-' indicator"}},
		{"yaml syntax error, tab", "name: x\nlane: c2x86\nmodels:\n\t- name: a\n", []string{
			"campaign.yaml:4: yaml: found character that cannot start any token",
		}},
		{"two documents", "name: a\n---\nname: b\n", []string{"campaign.yaml:2: more than one YAML document"}},
		{"missing everything", "tasks: {}\n", []string{
			"campaign.yaml:1: lane: required",
			"campaign.yaml:1: models: at least one model is required",
			"campaign.yaml:1: name: required",
		}},
		{"unknown lane, kind, field with suggestions", `name: demo
lane: c2x68
models:
  - name: local
    kind: opnai
    model: m
sampling:
  temprature: 0.2
  bogus: 1
`, []string{
			`campaign.yaml:2: lane: unknown lane "c2x68" (did you mean "c2x86"? known: c2x86, cuda-synth)`,
			`campaign.yaml:5: models[0].kind: unknown kind "opnai" (did you mean "openai"? known: openai, ollama, langchain, script, hipify)`,
			`campaign.yaml:8: sampling.temprature: unknown field (did you mean "temperature"?)`,
			`campaign.yaml:9: sampling.bogus: unknown field`,
		}},
		{"bad urls and missing fields", `name: demo
lane: c2x86
models:
  - name: a
    kind: openai
    base_url: ftp://host/v1
    model: m
  - name: b
    kind: openai
  - name: c
    kind: ollama
    base_url: "http://"
    model: m
  - name: d
    kind: openai
    base_url: "http://user:pw@host:8000/v1"
    model: m
`, []string{
			"campaign.yaml:6: models[0].base_url: must be an http:// or https:// URL",
			"campaign.yaml:8: models[1].base_url: required for kind openai",
			"campaign.yaml:8: models[1].model: required for kind openai",
			"campaign.yaml:12: models[2].base_url: URL has no host",
			"campaign.yaml:16: models[3].base_url: must not hold credentials (use api_key_env)",
		}},
		{"synthesizer, duplicates, concurrency", `name: demo
lane: c2x86
models:
  - name: local
    kind: openai
    base_url: http://127.0.0.1:8000/v1
    model: m
  - name: local
    kind: openai
    base_url: http://127.0.0.1:8001/v1
    model: m
    concurrency: 0
refinement:
  rounds: 1
  synthesizer: lokal
`, []string{
			"campaign.yaml:8: models[1].name: duplicate model name \"local\" (first at line 4)",
			"campaign.yaml:12: models[1].concurrency: must be >= 1",
			`campaign.yaml:15: refinement.synthesizer: unknown model "lokal" (did you mean "local"? known: local)`,
		}},
		{"negative numbers and zero samples", `name: demo
lane: c2x86
tasks:
  samples_per_task: 0
  limit: -1
models:
  - {name: s, kind: script, script: a.jsonl, latency: -1s}
concurrency: -3
budgets: {tasks: -1, tokens: -5, wall_time: -1h}
sandbox: {memory_mb: 0, wall_time: 0s}
agent: {repair_turns: -1}
retry: {max_attempts: 0, base_delay: 2s, max_delay: 1s}
refinement: {rounds: -1, threshold: 1.5, factor: 0}
sampling: {temperature: -0.1, top_p: 0, max_tokens: -1}
curation: {bands: 10, select: best, single_share: 1, validation: -0.1, difficulty: [9000, 100], threshold: 0, min_speedup: -1, stream: sometimes}
gpu: {slots_per_device: 9, devices: -1}
`, []string{
			"campaign.yaml:4: tasks.samples_per_task: must be >= 1",
			"campaign.yaml:5: tasks.limit: must be >= 0",
			"campaign.yaml:7: models[0].latency: must be >= 0",
			"campaign.yaml:8: concurrency: must be >= 1",
			"campaign.yaml:9: budgets.tasks: must be >= 0",
			"campaign.yaml:9: budgets.tokens: must be >= 0",
			"campaign.yaml:9: budgets.wall_time: must be >= 0",
			"campaign.yaml:10: sandbox.memory_mb: must be >= 1",
			"campaign.yaml:10: sandbox.wall_time: must be > 0",
			"campaign.yaml:11: agent.repair_turns: must be >= 0",
			"campaign.yaml:12: retry.max_attempts: must be >= 1",
			"campaign.yaml:12: retry.max_delay: must be >= retry.base_delay (2s)",
			"campaign.yaml:13: refinement.factor: must be >= 1",
			"campaign.yaml:13: refinement.rounds: must be >= 0",
			"campaign.yaml:13: refinement.threshold: must be in [0, 1]",
			"campaign.yaml:14: sampling.max_tokens: must be >= 1",
			"campaign.yaml:14: sampling.temperature: must be in [0, 2]",
			"campaign.yaml:14: sampling.top_p: must be in (0, 1]",
			"campaign.yaml:15: curation.bands: bands x rows (10 x 8) must equal curation.permutations (128)",
			"campaign.yaml:15: curation.difficulty: want two thresholds [easy, hard] in tokens, 0 < easy <= hard",
			"campaign.yaml:15: curation.min_speedup: must be >= 0 (0: no speed-up required)",
			`campaign.yaml:15: curation.select: unknown selection policy "best" (known: all-verified, best-per-task, concur)`,
			"campaign.yaml:15: curation.single_share: must be in [0, 1)",
			`campaign.yaml:15: curation.stream: unknown stream policy "sometimes" (known: any, prefer, require)`,
			"campaign.yaml:15: curation.threshold: must be in (0, 1]",
			"campaign.yaml:15: curation.validation: must be in [0, 1)",
			"campaign.yaml:16: gpu.devices: must be >= 0",
			"campaign.yaml:16: gpu.slots_per_device: must be 1-8, got 9",
		}},
		{"wrong types", `name: demo
lane: c2x86
concurrency: many
models:
  - name: local
    kind: [openai]
    base_url: http://h/v1
    model: m
    timeout: 90
    think: yes
sandbox: {wall_time: soon, memory_mb: 1.5}
tasks: builtin
refinement: {threshold: high}
`, []string{
			`campaign.yaml:3: concurrency: must be an integer, got "many"`,
			"campaign.yaml:6: models[0].kind: must be a string, got a list",
			`campaign.yaml:9: models[0].timeout: must be a duration such as "90s" or "10m", got "90"`,
			`campaign.yaml:10: models[0].think: must be true or false, got "yes"`,
			`campaign.yaml:11: sandbox.memory_mb: must be an integer, got "1.5"`,
			`campaign.yaml:11: sandbox.wall_time: must be a duration such as "90s" or "10m", got "soon"`,
			`campaign.yaml:12: tasks: must be a mapping, got "builtin"`,
			`campaign.yaml:13: refinement.threshold: must be a number, got "high"`,
		}},
		{"models not a list", "name: a\nlane: c2x86\nmodels: {name: x}\n", []string{
			"campaign.yaml:3: models: must be a list, got a mapping",
		}},
		{"kind-specific fields", `name: demo
lane: c2x86
models:
  - name: a
    kind: openai
    base_url: http://h/v1
    model: m
    num_ctx: 4096
    keep_alive: 5m
    provider: anthropic
    script: x.jsonl
    tools: json
  - name: b
    kind: langchain
    model: m
  - name: c
    kind: langchain
    provider: ollama
    model: m
  - name: d
    kind: langchain
    provider: antropic
    model: m
    api_key_env: sk-live-123
  - name: e
    kind: script
    base_url: http://h/v1
`, []string{
			"campaign.yaml:8: models[0].num_ctx: only used by kind ollama",
			"campaign.yaml:9: models[0].keep_alive: only used by kind ollama",
			"campaign.yaml:10: models[0].provider: only used by kind langchain",
			"campaign.yaml:11: models[0].script: only used by kind script",
			`campaign.yaml:12: models[0].tools: unknown tools mode "json" (known: native, text, none)`,
			"campaign.yaml:13: models[1].provider: required for kind langchain (one of anthropic, cohere, googleai, mistral, openai)",
			"campaign.yaml:18: models[2].provider: use kind ollama instead (langchaingo's ollama provider has no tool calling)",
			`campaign.yaml:22: models[3].provider: unknown provider "antropic" (did you mean "anthropic"? known: anthropic, cohere, googleai, mistral, openai)`,
			"campaign.yaml:24: models[3].api_key_env: must name an environment variable (such as OPENAI_API_KEY), not hold the key itself",
			"campaign.yaml:25: models[4].script: required for kind script",
			"campaign.yaml:27: models[4].base_url: not used by kind script",
		}},
		{"kind hipify takes no server fields", `name: demo
lane: c2x86
models:
  - name: baseline
    kind: hipify
    base_url: http://h/v1
    model: m
    api_key_env: KEY
    script: s.jsonl
    provider: openai
    latency: 1s
    num_ctx: 10
    think: true
    tools: native
`, []string{
			"campaign.yaml:6: models[0].base_url: not used by kind hipify",
			"campaign.yaml:7: models[0].model: not used by kind hipify",
			"campaign.yaml:8: models[0].api_key_env: not used by kind hipify",
			"campaign.yaml:9: models[0].script: only used by kind script",
			"campaign.yaml:10: models[0].provider: only used by kind langchain",
			"campaign.yaml:11: models[0].latency: only used by kind script",
			"campaign.yaml:12: models[0].num_ctx: only used by kind ollama",
			"campaign.yaml:13: models[0].think: not used by kind hipify",
			"campaign.yaml:14: models[0].tools: kind hipify calls no tools: leave it out or set none",
		}},
		{"tasks: corpus and templates, empty pool, names", `name: Demo Campaign
lane: cuda-synth
tasks:
  corpus: corpus
  categories: [a, a, ""]
  templates:
    pools:
      persona: [x]
      operation: []
      size:
models:
  - {name: "a b", kind: script, script: s.jsonl}
`, []string{
			"campaign.yaml:1: name: must match [a-z0-9._-]+",
			`campaign.yaml:5: tasks.categories[1]: duplicate category "a"`,
			"campaign.yaml:5: tasks.categories[2]: empty category",
			"campaign.yaml:6: tasks.templates: cannot be used together with tasks.corpus",
			"campaign.yaml:6: tasks.templates.dir: required (\"builtin\" or a folder)",
			`campaign.yaml:9: tasks.templates.pools.operation: pool "operation" has no values`,
			`campaign.yaml:10: tasks.templates.pools.size: pool "size" has no values`,
			"campaign.yaml:12: models[0].name: must match [A-Za-z0-9._-]+",
		}},
		{"duplicate keys and merge keys", `name: a
lane: c2x86
name: b
base: &b {kind: openai}
models:
  - <<: *b
    name: x
`, []string{
			"campaign.yaml:3: name: duplicate field (first at line 1)",
			"campaign.yaml:4: base: unknown field",
			// The model's own checks are left out: its fields are incomplete.
			"campaign.yaml:6: models[0]: merge keys (<<) are not supported",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse([]byte(tt.yaml), "campaign.yaml", lanes)
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			if s != nil {
				t.Errorf("Parse returned a spec with an error")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			got := make([]string, len(es))
			for i, e := range es {
				got[i] = e.Error()
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("errors:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tt.want, "\n      "))
			}
			if err.Error() != strings.Join(tt.want, "\n") {
				t.Errorf("Error() = %q", err.Error())
			}
			var one *Error
			if !errors.As(err, &one) || one.File != "campaign.yaml" {
				t.Errorf("errors.As(*Error) = %v", one)
			}
		})
	}
}

const minimal = `name: m
lane: c2x86
models:
  - {name: a, kind: openai, base_url: "http://127.0.0.1:8000/v1", model: m}
`

func TestDefaults(t *testing.T) {
	t.Parallel()
	yes, fivePercentVal := true, 0.05
	s, err := Parse([]byte(minimal), "dir/c.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Name: "m", Lane: "c2x86",
		Tasks:       Tasks{Corpus: "builtin", SamplesPerTask: 1, Seed: 1},
		Models:      []Model{{Name: "a", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:8000/v1", Model: "m", Concurrency: 4, Tools: ToolsNative, Timeout: Duration(10 * time.Minute)}},
		Sampling:    Sampling{MaxTokens: 4096},
		Concurrency: 8,
		Sandbox:     Sandbox{WallTime: Duration(10 * time.Second), CPUTime: Duration(5 * time.Second), MemoryMB: 1024, Processes: 64, OutputKB: 1024, FileSizeMB: 64},
		Agent:       Agent{RepairTurns: 2, MaxToolCalls: 8},
		Retry:       Retry{MaxAttempts: 5, BaseDelay: Duration(500 * time.Millisecond), MaxDelay: Duration(30 * time.Second)},
		Refinement:  Refinement{Threshold: 0.5, MinEvidence: 5, Factor: 10, Synthesizer: "a", Plateau: 0.02},
		Curation: Curation{Dedup: &yes, Shingle: 5, Permutations: 128, Bands: 16, Rows: 8, Threshold: 0.8, Select: "all-verified",
			KeepSpeedup: 5, Validation: &fivePercentVal, Difficulty: []float64{4000, 8500}},
		GPU: GPU{SlotsPerDevice: 1},
		Dir: "dir",
	}
	got, _ := yaml.Marshal(s)
	exp, _ := yaml.Marshal(&want)
	if string(got) != string(exp) || s.Dir != want.Dir {
		t.Errorf("defaults:\n got:\n%s\nwant:\n%s", got, exp)
	}

	// Defaults on a spec built in code gives the same result.
	code := &Spec{Name: "m", Lane: "c2x86", Models: []Model{{Name: "a", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:8000/v1", Model: "m"}}}
	code.Defaults()
	if got2, _ := yaml.Marshal(code); string(got2) != string(exp) {
		t.Errorf("Defaults() in code:\n%s", got2)
	}
	if err := code.Validate(Options{}); err != nil {
		t.Errorf("Validate: %v", err)
	}

	// Explicit zeros are kept (and reported where they are invalid), not
	// replaced by defaults.
	_, err = Parse([]byte(minimal+"tasks: {seed: 0, samples_per_task: 0}\nagent: {repair_turns: 0}\n"), "c.yaml", Options{})
	if err == nil || err.Error() != "c.yaml:5: tasks.samples_per_task: must be >= 1" {
		t.Errorf("explicit zero: %v", err)
	}
	s, err = Parse([]byte(minimal+"tasks: {seed: 0}\nagent: {repair_turns: 0}\n"), "c.yaml", Options{})
	if err != nil || s.Tasks.Seed != 0 || s.Agent.RepairTurns != 0 || s.Agent.MaxToolCalls != 8 {
		t.Errorf("explicit zeros = %+v %+v, %v", s.Tasks, s.Agent, err)
	}
}

// TestHipifyKind: a hipify model needs nothing but a name and the kind;
// it calls no tools by default.
func TestHipifyKind(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte("name: b\nlane: c2x86\nmodels:\n  - {name: baseline, kind: hipify}\n  - {name: llm, kind: openai, base_url: \"http://127.0.0.1:8000/v1\", model: m}\n"), "c.yaml", lanes)
	if err != nil {
		t.Fatal(err)
	}
	h, o := s.Models[0], s.Models[1]
	if h.Kind != KindHipify || h.Tools != ToolsNone || h.Concurrency != 4 || h.Timeout.D() != 10*time.Minute || h.Model != "" || h.BaseURL != "" {
		t.Errorf("hipify model %+v", h)
	}
	if o.Tools != ToolsNative {
		t.Errorf("the other model's tools: %q", o.Tools)
	}
	if _, err := Parse([]byte("name: b\nlane: c2x86\nmodels:\n  - {name: baseline, kind: hipify, tools: none, concurrency: 2, timeout: 1m}\n"), "c.yaml", lanes); err != nil {
		t.Errorf("tools: none, concurrency and timeout: %v", err)
	}
}

func TestValidateInCode(t *testing.T) {
	t.Parallel()
	s := &Spec{Name: "x", Lane: "c2x86", Models: []Model{{Name: "a", Kind: "script", Script: "s.jsonl"}}}
	s.Defaults()
	s.Concurrency = 0
	err := s.Validate(lanes)
	if err == nil || err.Error() != "concurrency: must be >= 1" {
		t.Errorf("Validate = %v", err)
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "corpus"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "answers.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := func(corpus, script string) string {
		return "name: p\nlane: c2x86\ntasks: {corpus: " + corpus + "}\nmodels:\n  - {name: s, kind: script, script: " + script + "}\n"
	}
	check := Options{CheckPaths: true}

	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(spec("corpus", "answers.jsonl")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, check)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.Tasks.Corpus != filepath.Join(dir, "corpus") || s.Models[0].Script != filepath.Join(dir, "answers.jsonl") {
		t.Errorf("paths not resolved against the spec's folder: %q %q", s.Tasks.Corpus, s.Models[0].Script)
	}

	_, err = Parse([]byte(spec("answers.jsonl", "corpus")), "c.yaml", Options{Dir: dir, CheckPaths: true})
	want := "c.yaml:3: tasks.corpus: not a folder: " + filepath.Join(dir, "answers.jsonl") + "\n" +
		"c.yaml:5: models[0].script: not a regular file: " + filepath.Join(dir, "corpus")
	if err == nil || err.Error() != want {
		t.Errorf("wrong kinds of path:\n got %v\nwant %s", err, want)
	}
	_, err = Parse([]byte(spec("missing", "answers.jsonl")), "c.yaml", Options{Dir: dir, CheckPaths: true})
	if err == nil || err.Error() != "c.yaml:3: tasks.corpus: no such folder: "+filepath.Join(dir, "missing") {
		t.Errorf("missing corpus: %v", err)
	}

	// Confine: specs from the network may not point outside their folder.
	_, err = Parse([]byte(spec("../etc", "/etc/passwd")), "c.yaml", Options{Dir: dir, Confine: true})
	want = "c.yaml:3: tasks.corpus: must be a relative path inside the spec's folder\n" +
		"c.yaml:5: models[0].script: must be a relative path inside the spec's folder"
	if err == nil || err.Error() != want {
		t.Errorf("confine:\n got %v\nwant %s", err, want)
	}
	if _, err := Parse([]byte(spec("corpus", "answers.jsonl")), "c.yaml", Options{Dir: dir, Confine: true, CheckPaths: true}); err != nil {
		t.Errorf("confined local paths: %v", err)
	}

	if _, err := Load(filepath.Join(dir, "nope.yaml"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load missing file: %v", err)
	}
}

func TestTooManyNodes(t *testing.T) {
	t.Parallel()
	// Nested aliases cannot explode: the schema has no nested lists, so
	// an expanded alias of lists is a type error at its first level.
	var b strings.Builder
	b.WriteString("name: x\nlane: c2x86\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [" + strings.Repeat("*a"+itoa(i-1)+", ", 9) + "*a" + itoa(i-1) + "]\n")
	}
	b.WriteString("tasks: {categories: *a8}\n")
	start := time.Now()
	if _, err := Parse([]byte(b.String()), "bomb.yaml", Options{}); err == nil || !strings.Contains(err.Error(), "tasks.categories[9]: must be a string, got a list") {
		t.Errorf("nested aliases: %v", err)
	}
	// A flat list of aliases to a model still multiplies nodes: bounded.
	b.Reset()
	b.WriteString("name: x\nlane: c2x86\nmodels: [&m {name: a, kind: script, script: s, concurrency: 1, tools: none}" + strings.Repeat(", *m", 20_000) + "]\n")
	_, err := Parse([]byte(b.String()), "big.yaml", Options{})
	if err == nil || err.Error() != "big.yaml:1: spec too large (over 100000 YAML nodes after expanding aliases)" {
		t.Errorf("many aliases: %.300v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestManyErrorsCapped(t *testing.T) {
	t.Parallel()
	y := "name: x\nlane: c2x86\nmodels:\n" + strings.Repeat("  - {name: a, kind: script, script: s}\n", 200)
	_, err := Parse([]byte(y), "c.yaml", Options{})
	var es Errors
	if !errors.As(err, &es) || len(es) != maxErrors+1 {
		t.Fatalf("got %d errors, want %d", len(es), maxErrors+1)
	}
	if last := es[len(es)-1].Error(); last != "c.yaml: and 149 more problems" {
		t.Errorf("last = %q", last)
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "f.yaml", Line: 3, Field: "a.b", Msg: "bad"}, "f.yaml:3: a.b: bad"},
		{Error{File: "f.yaml", Field: "a", Msg: "bad"}, "f.yaml: a: bad"},
		{Error{Line: 2, Field: "a", Msg: "bad"}, "line 2: a: bad"},
		{Error{Field: "a", Msg: "bad"}, "a: bad"},
		{Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	names := []string{"temperature", "top_p", "max_tokens", "seed"}
	for in, want := range map[string]string{"temprature": "temperature", "topp": "top_p", "sed": "seed", "zzz": "", "max_token": "max_tokens", "x": ""} {
		if got := suggest(in, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
