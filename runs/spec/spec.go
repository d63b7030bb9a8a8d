// Package spec owns the campaign spec: the YAML file that configures one
// campaign (lane, task sources, model endpoints, sampling, concurrency,
// budgets, sandbox limits, agent and retry policy, refinement policy).
//
// Parse and Load decode the YAML strictly (unknown keys are errors), apply
// defaults to the fields the file leaves out, and validate the result. Every
// problem is reported, not just the first, as an Errors value whose entries
// read "file:line: field.path: message", sorted by line:
//
//	campaign.yaml:7: sampling.temprature: unknown field (did you mean "temperature"?)
//	campaign.yaml:12: models[1].concurrency: must be >= 1
//
// Durations are Go duration strings ("90s", "10m", "8h"); 0 is accepted as
// a zero duration. Relative paths (tasks.corpus, tasks.templates.dir,
// models[].script) are resolved against the spec file's folder by Parse.
// A spec never holds secrets: models[].api_key_env names an environment
// variable that main reads.
package spec

import (
	"time"

	"github.com/kiln-dev/kiln/agent"
)

// Spec is one campaign's configuration. Field comments give the defaults
// that Parse and Defaults apply.
type Spec struct {
	// Name identifies the campaign; required, [a-z0-9._-]+, at most 64 bytes.
	Name string `yaml:"name"`
	// Lane is the kind of task (c2x86, cuda-synth, ...); required, one of
	// Options.Lanes when that is given.
	Lane string `yaml:"lane"`
	// Tasks says where tasks come from.
	Tasks Tasks `yaml:"tasks"`
	// Models are the endpoints attempts are spread over; at least one,
	// names unique.
	Models []Model `yaml:"models"`
	// Sampling holds the generation parameters sent with every call.
	Sampling Sampling `yaml:"sampling"`
	// Concurrency is the number of attempts in flight for the whole
	// campaign (default 8, >= 1). Each endpoint is further limited by its
	// own models[].concurrency, and an attempt holds an endpoint slot only
	// while its model call runs: set this to about twice the endpoints'
	// total concurrency so they stay busy while answers are verified
	// (cmd/kiln/BENCH.md).
	Concurrency int `yaml:"concurrency"`
	// Budgets stop the campaign early; zero values mean unlimited.
	Budgets Budgets `yaml:"budgets"`
	// Sandbox holds the limits of every compile and run.
	Sandbox Sandbox `yaml:"sandbox"`
	// Agent bounds each attempt's conversation.
	Agent Agent `yaml:"agent"`
	// Retry is the policy for transient model errors.
	Retry Retry `yaml:"retry"`
	// Refinement configures the rounds after round 0.
	Refinement Refinement `yaml:"refinement"`
	// Curation is what kiln export keeps of the campaign's results.
	Curation Curation `yaml:"curation"`
	// GPU says how a lane that judges on GPUs shares them.
	GPU GPU `yaml:"gpu"`

	// Dir is the folder relative paths were resolved against (the spec
	// file's folder, or Options.Dir). Not read from YAML.
	Dir string `yaml:"-"`

	file  string         // file name for error messages
	lines map[string]int // field path -> line, every key seen in the YAML
	set   map[string]bool
}

// Tasks says where a campaign's tasks come from. Exactly one of Corpus,
// Templates and FromCampaign is used; with none, Corpus defaults to
// "builtin".
type Tasks struct {
	// Corpus is "builtin" (the lane's embedded corpus), "bench" (the
	// lane's embedded benchmark set, for kiln eval; lanes without one
	// refuse it) or a folder of task items, relative to the spec file's
	// folder.
	Corpus string `yaml:"corpus"`
	// Templates renders tasks from persona templates, for template lanes.
	Templates *Templates `yaml:"templates"`
	// FromCampaign makes the verified records of another campaign in the
	// same data folder the tasks (its name, id or a unique id prefix):
	// each done task whose judged attempt's latest verdict passed every
	// stage (pending, failed and suspected ones are left out). Only lanes
	// that take records accept it, and only records of the lanes they
	// name: cuda2hip takes cuda-synth records (each verified program
	// becomes a program to translate). The records are read when the
	// campaign starts and again on resume (task keys are the records'
	// own, so nothing is redone; records verified since are added).
	// Unknown campaigns, campaigns of another lane and campaigns without a
	// verified record are errors.
	FromCampaign string `yaml:"from_campaign"`
	// Categories keeps only tasks carrying one of these labels (empty = all).
	Categories []string `yaml:"categories"`
	// Limit caps the number of tasks (0 = all, >= 0).
	Limit int `yaml:"limit"`
	// SamplesPerTask is the number of attempts per task per round
	// (default 1, >= 1).
	SamplesPerTask int `yaml:"samples_per_task"`
	// Seed drives deterministic task selection and template sampling
	// (default 1).
	Seed int64 `yaml:"seed"`
}

// Templates is a folder of persona templates and the pools their
// placeholders draw from.
type Templates struct {
	// Dir is "builtin" (the lane's embedded templates) or a template
	// folder laid over them, relative to the spec file's folder; required.
	Dir string `yaml:"dir"`
	// Pools maps a placeholder variable to its values; every pool needs at
	// least one value.
	Pools map[string][]string `yaml:"pools"`
}

// Reserved tasks.corpus values: the lane's embedded corpus and its
// embedded benchmark set.
const (
	CorpusBuiltin = "builtin"
	CorpusBench   = "bench"
)

// Model kinds.
const (
	KindOpenAI    = "openai"    // any OpenAI-compatible server (vLLM, llama.cpp, OpenAI)
	KindOllama    = "ollama"    // Ollama's native API
	KindLangchain = "langchain" // other providers through langchaingo
	KindScript    = "script"    // replays answers from a JSONL file (tests, benchmarks)
	KindHipify    = "hipify"    // the rule-based CUDA->HIP translator as a baseline model (no server)
)

// Tool-calling modes.
const (
	ToolsNative = "native" // the server's tool-calling API
	ToolsText   = "text"   // a plain-text protocol in the prompt
	ToolsNone   = "none"   // no tools: the model answers directly
)

// DefaultOllamaURL is the base URL used for kind ollama when none is given.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// Kinds returns the accepted models[].kind values.
func Kinds() []string { return []string{KindOpenAI, KindOllama, KindLangchain, KindScript, KindHipify} }

// ToolModes returns the accepted models[].tools values.
func ToolModes() []string { return []string{ToolsNative, ToolsText, ToolsNone} }

// LangchainProviders returns the models[].provider values accepted for kind
// langchain: the langchaingo v0.1.14 chat providers that cmd/kiln wires.
// (Ollama has its own kind: langchaingo's Ollama provider lacks tool calling.)
func LangchainProviders() []string {
	return []string{"anthropic", "cohere", "googleai", "mistral", "openai"}
}

// Model is one endpoint.
type Model struct {
	// Name identifies the endpoint within the campaign; required, unique,
	// [A-Za-z0-9._-]+.
	Name string `yaml:"name"`
	// Kind is openai, ollama, langchain, script or hipify; required.
	// hipify answers with the rule-based translation of the CUDA program
	// in the prompt (agent/hipify): it takes no base_url, model, api key,
	// provider, script, latency or Ollama field, calls no tools (tools
	// defaults to none for it) and uses no tokens.
	Kind string `yaml:"kind"`
	// BaseURL is the server's http or https URL; required for openai,
	// default DefaultOllamaURL for ollama, optional for langchain; not
	// for script or hipify.
	BaseURL string `yaml:"base_url"`
	// Model is the model name the server knows; required except for
	// script and hipify (which refuses it).
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key
	// (main reads it); never the key itself.
	APIKeyEnv string `yaml:"api_key_env"`
	// Provider is the langchaingo provider (kind langchain only, required
	// there); see LangchainProviders.
	Provider string `yaml:"provider"`
	// Script is the JSONL file of answers (kind script only, required
	// there), relative to the spec file's folder.
	Script string `yaml:"script"`
	// Concurrency is the per-endpoint limit of calls in flight (default 4;
	// 1 for ollama; >= 1).
	Concurrency int `yaml:"concurrency"`
	// Tools is native, text or none (default native; none for hipify,
	// which accepts nothing else).
	Tools string `yaml:"tools"`
	// Timeout bounds one call (default 10m, > 0).
	Timeout Duration `yaml:"timeout"`
	// NumCtx is Ollama's context length (ollama only; default 8192).
	NumCtx int `yaml:"num_ctx"`
	// KeepAlive is how long Ollama keeps the model loaded (ollama only;
	// nil = server default; negative = forever).
	KeepAlive *Duration `yaml:"keep_alive"`
	// Think turns reasoning on or off for models that have it (nil =
	// server default).
	Think *bool `yaml:"think"`
	// Latency is a simulated per-call latency (script only; >= 0).
	Latency Duration `yaml:"latency"`
}

// Sampling holds generation parameters. Nil pointers mean "server default".
type Sampling struct {
	// Temperature in [0, 2].
	Temperature *float64 `yaml:"temperature"`
	// TopP in (0, 1].
	TopP *float64 `yaml:"top_p"`
	// MaxTokens bounds each completion (default 4096, >= 1).
	MaxTokens int `yaml:"max_tokens"`
	// Seed for servers that support seeded sampling.
	Seed *int `yaml:"seed"`
}

// Agent converts the spec's sampling into the agent's request parameters.
func (s Sampling) Agent() agent.Sampling {
	return agent.Sampling{Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens, Seed: s.Seed}
}

// Budgets stop a campaign early; zero means unlimited, negative is an error.
type Budgets struct {
	Tasks    int      `yaml:"tasks"`     // attempts-worth of tasks started
	Tokens   int64    `yaml:"tokens"`    // prompt + completion + reasoning tokens
	WallTime Duration `yaml:"wall_time"` // since the campaign started
}

// MaxSlotsPerDevice bounds gpu.slots_per_device.
const MaxSlotsPerDevice = 8

// GPU says how a lane that judges on GPUs (torch2cuda) shares them.
type GPU struct {
	// SlotsPerDevice is how many evaluations run at once on each GPU
	// (default 1, at most 8). Above 1 they share the GPU's memory and
	// compute, but every timing runs alone on its GPU, and the time an
	// evaluation waits for its turn is not charged to it. Lanes that
	// cannot share a GPU refuse values above 1.
	SlotsPerDevice int `yaml:"slots_per_device"`
	// Devices is how many of the host's GPUs the lane judges on, the
	// first ones (default 0: all of them).
	Devices int `yaml:"devices"`
}

// Sandbox holds the limits of every compile and run; all must be > 0.
type Sandbox struct {
	WallTime   Duration `yaml:"wall_time"`    // default 10s
	CPUTime    Duration `yaml:"cpu_time"`     // default 5s
	MemoryMB   int      `yaml:"memory_mb"`    // default 1024
	Processes  int      `yaml:"processes"`    // default 64
	OutputKB   int      `yaml:"output_kb"`    // default 1024 (stdout and stderr, each)
	FileSizeMB int      `yaml:"file_size_mb"` // default 64
}

// Agent bounds each attempt's conversation; both >= 0.
type Agent struct {
	RepairTurns  int `yaml:"repair_turns"`   // default 2
	MaxToolCalls int `yaml:"max_tool_calls"` // default 8
}

// Retry is the policy for transient model errors.
type Retry struct {
	MaxAttempts int      `yaml:"max_attempts"` // default 5, >= 1 (1 = no retry)
	BaseDelay   Duration `yaml:"base_delay"`   // default 500ms, >= 0
	MaxDelay    Duration `yaml:"max_delay"`    // default 30s, >= base_delay
}

// Refinement configures the rounds after round 0.
type Refinement struct {
	// Rounds is the number of refinement rounds after round 0 (default 0).
	Rounds int `yaml:"rounds"`
	// Threshold is the pass rate below which a category is targeted
	// (default 0.5, in [0, 1]).
	Threshold float64 `yaml:"threshold"`
	// MinEvidence is the attempts a category needs before it can be
	// targeted (default 5, >= 1).
	MinEvidence int `yaml:"min_evidence"`
	// Factor is the resynthesis k per failing example and the mix shift
	// factor (default 10, >= 1).
	Factor int `yaml:"factor"`
	// Synthesizer is the models[].name that writes resynthesised tasks
	// (default: the first model); must exist.
	Synthesizer string `yaml:"synthesizer"`
	// Categories are always targeted.
	Categories []string `yaml:"categories"`
	// Plateau stops refinement when a round improves the pass rate by
	// less than this (default 0.02, in [0, 1]).
	Plateau float64 `yaml:"plateau"`
}

// Curation configures kiln export's curation (runs/curate, runs/dataset);
// export's flags override it.
type Curation struct {
	// Dedup removes near-duplicate answers (default true).
	Dedup *bool `yaml:"dedup"`
	// Shingle, Permutations, Bands, Rows and Threshold are the MinHash
	// and LSH parameters (defaults 5, 128, 16, 8, 0.8; bands x rows must
	// equal permutations, threshold in (0, 1]).
	Shingle      int     `yaml:"shingle"`
	Permutations int     `yaml:"permutations"`
	Bands        int     `yaml:"bands"`
	Rows         int     `yaml:"rows"`
	Threshold    float64 `yaml:"threshold"`
	// Select is the selection policy: all-verified (default),
	// best-per-task or concur.
	Select string `yaml:"select"`
	// KeepSpeedup: concur keeps every sample faster than this (default 5).
	KeepSpeedup float64 `yaml:"keep_speedup"`
	// SingleShare is concur's target share of single-operator samples,
	// in [0, 1); 0 (default) leaves the mix alone.
	SingleShare float64 `yaml:"single_share"`
	// MinSpeedup, above 0, keeps only samples whose measured speedup is
	// at least it, under every policy (default 0: a correct kernel is
	// kept however slow; 1: none slower than the reference).
	MinSpeedup float64 `yaml:"min_speedup"`
	// Stream is where kept kernels must run: any (default), prefer
	// (current-stream samples win near-duplicate clusters and per-task
	// picks) or require (only samples measured on PyTorch's current
	// stream; torch2cuda measures it).
	Stream string `yaml:"stream"`
	// Benchmarks are folders of benchmark documents (KernelBench
	// problems, eval sets) that exported samples must not duplicate (and
	// that torch2cuda's refinement rounds drop synthesised problems
	// duplicating); relative paths resolve against the spec's folder.
	Benchmarks []string `yaml:"benchmarks"`
	// Validation is the fraction of tasks in the validation split, in
	// [0, 1) (default 0.05).
	Validation *float64 `yaml:"validation"`
	// Difficulty are the average-reasoning-length thresholds, in tokens,
	// between easy, medium and hard tasks (default [4000, 8500]).
	Difficulty []float64 `yaml:"difficulty"`
}

// Duration is a time.Duration written in YAML as a Go duration string.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as a Go duration string (used by YAML and JSON).
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Model returns the endpoint with this name.
func (s *Spec) Model(name string) (*Model, bool) {
	for i := range s.Models {
		if s.Models[i].Name == name {
			return &s.Models[i], true
		}
	}
	return nil, false
}

// Defaults fills the fields left at their zero value with their defaults.
// Parse applies the same defaults, but only to fields the YAML leaves out, so
// that an explicit "samples_per_task: 0" is reported rather than replaced.
func (s *Spec) Defaults() {
	s.defaults(func(string) bool { return false })
}

func (s *Spec) defaults(isSet func(path string) bool) {
	def := func(path string, zero bool, apply func()) {
		if zero && !isSet(path) {
			apply()
		}
	}
	defInt := func(path string, p *int, v int) { def(path, *p == 0, func() { *p = v }) }
	defDur := func(path string, p *Duration, v time.Duration) { def(path, *p == 0, func() { *p = Duration(v) }) }
	defFloat := func(path string, p *float64, v float64) { def(path, *p == 0, func() { *p = v }) }

	t := &s.Tasks
	if t.Corpus == "" && t.Templates == nil && t.FromCampaign == "" && !isSet("tasks.corpus") {
		t.Corpus = "builtin"
	}
	defInt("tasks.samples_per_task", &t.SamplesPerTask, 1)
	def("tasks.seed", t.Seed == 0, func() { t.Seed = 1 })

	for i := range s.Models {
		m := &s.Models[i]
		p := modelPath(i)
		conc := 4
		if m.Kind == KindOllama {
			conc = 1
			def(p+".base_url", m.BaseURL == "", func() { m.BaseURL = DefaultOllamaURL })
			defInt(p+".num_ctx", &m.NumCtx, 8192)
		}
		defInt(p+".concurrency", &m.Concurrency, conc)
		tools := ToolsNative
		if m.Kind == KindHipify {
			tools = ToolsNone // it calls no tools
		}
		def(p+".tools", m.Tools == "", func() { m.Tools = tools })
		defDur(p+".timeout", &m.Timeout, 10*time.Minute)
	}

	defInt("sampling.max_tokens", &s.Sampling.MaxTokens, 4096)
	defInt("concurrency", &s.Concurrency, 8)

	sb := &s.Sandbox
	defDur("sandbox.wall_time", &sb.WallTime, 10*time.Second)
	defDur("sandbox.cpu_time", &sb.CPUTime, 5*time.Second)
	defInt("sandbox.memory_mb", &sb.MemoryMB, 1024)
	defInt("sandbox.processes", &sb.Processes, 64)
	defInt("sandbox.output_kb", &sb.OutputKB, 1024)
	defInt("sandbox.file_size_mb", &sb.FileSizeMB, 64)

	defInt("gpu.slots_per_device", &s.GPU.SlotsPerDevice, 1)

	defInt("agent.repair_turns", &s.Agent.RepairTurns, 2)
	defInt("agent.max_tool_calls", &s.Agent.MaxToolCalls, 8)

	defInt("retry.max_attempts", &s.Retry.MaxAttempts, 5)
	defDur("retry.base_delay", &s.Retry.BaseDelay, 500*time.Millisecond)
	defDur("retry.max_delay", &s.Retry.MaxDelay, 30*time.Second)

	r := &s.Refinement
	defFloat("refinement.threshold", &r.Threshold, 0.5)
	defInt("refinement.min_evidence", &r.MinEvidence, 5)
	defInt("refinement.factor", &r.Factor, 10)
	defFloat("refinement.plateau", &r.Plateau, 0.02)
	cu := &s.Curation
	def("curation.dedup", cu.Dedup == nil, func() { t := true; cu.Dedup = &t })
	defInt("curation.shingle", &cu.Shingle, 5)
	defInt("curation.permutations", &cu.Permutations, 128)
	defInt("curation.bands", &cu.Bands, 16)
	defInt("curation.rows", &cu.Rows, 8)
	defFloat("curation.threshold", &cu.Threshold, 0.8)
	def("curation.select", cu.Select == "", func() { cu.Select = "all-verified" })
	defFloat("curation.keep_speedup", &cu.KeepSpeedup, 5)
	def("curation.validation", cu.Validation == nil, func() { v := 0.05; cu.Validation = &v })
	def("curation.difficulty", cu.Difficulty == nil, func() { cu.Difficulty = []float64{4000, 8500} })
	if len(s.Models) > 0 {
		def("refinement.synthesizer", r.Synthesizer == "", func() { r.Synthesizer = s.Models[0].Name })
	}
}

func modelPath(i int) string { return "models[" + itoa(i) + "]" }
