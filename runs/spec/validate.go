package spec

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

var (
	campaignNameRE = regexp.MustCompile(`^[a-z0-9._-]+$`)
	modelNameRE    = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	envNameRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

const maxNameLen = 64

// Validate checks the spec and returns an Errors value listing every
// problem, or nil. It does not apply defaults (call Defaults first on a spec
// built in code). Line numbers are known only for specs from Parse or Load.
func (s *Spec) Validate(opts Options) error {
	v := &validator{s: s}
	v.campaign(opts)
	v.tasks(opts)
	v.models(opts)
	v.rest()
	if len(v.errs) == 0 {
		return nil
	}
	return sortErrors(v.errs)
}

// lineOf returns the line of path, or of the nearest enclosing field that
// the YAML holds, or 0.
func (s *Spec) lineOf(path string) int {
	for {
		if l, ok := s.lines[path]; ok {
			return l
		}
		if path == "" {
			return 0
		}
		path = parent(path)
	}
}

// parent cuts the last ".field" or "[i]" off a path.
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func (s *Spec) errAt(path, msg string) *Error {
	return &Error{File: s.file, Line: s.lineOf(path), Field: path, Msg: msg}
}

type validator struct {
	s    *Spec
	errs Errors
}

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, v.s.errAt(path, fmt.Sprintf(format, args...)))
}

func (v *validator) atLeast(path string, got, least int64) {
	if got < least {
		v.add(path, "must be >= %d", least)
	}
}

func (v *validator) inRange(path string, got, lo, hi float64, loOpen bool) {
	if got < lo || got > hi || (loOpen && got == lo) {
		lb := "["
		if loOpen {
			lb = "("
		}
		v.add(path, "must be in %s%g, %g]", lb, lo, hi)
	}
}

// oneOf reports value when it is not in allowed, suggesting the closest.
func (v *validator) oneOf(path, what, value string, allowed []string) bool {
	if slices.Contains(allowed, value) {
		return true
	}
	msg := fmt.Sprintf("unknown %s %q (", what, value)
	if sug := suggest(value, allowed); sug != "" {
		msg += fmt.Sprintf("did you mean %q? ", sug)
	}
	v.add(path, "%sknown: %s)", msg, strings.Join(allowed, ", "))
	return false
}

func (v *validator) name(path, value string, re *regexp.Regexp, pattern string) {
	switch {
	case value == "":
		v.add(path, "required")
	case len(value) > maxNameLen:
		v.add(path, "longer than %d bytes", maxNameLen)
	case !re.MatchString(value):
		v.add(path, "must match %s", pattern)
	}
}

func (v *validator) campaign(opts Options) {
	s := v.s
	v.name("name", s.Name, campaignNameRE, "[a-z0-9._-]+")
	switch {
	case s.Lane == "":
		v.add("lane", "required")
	case len(opts.Lanes) > 0:
		v.oneOf("lane", "lane", s.Lane, opts.Lanes)
	}
}

func (v *validator) tasks(opts Options) {
	t := v.s.Tasks
	switch {
	case t.FromCampaign != "" && t.Corpus != "":
		v.add("tasks.from_campaign", "cannot be used together with tasks.corpus")
	case t.FromCampaign != "" && t.Templates != nil:
		v.add("tasks.from_campaign", "cannot be used together with tasks.templates")
	case t.FromCampaign != "":
	case t.Templates != nil && t.Corpus != "":
		v.add("tasks.templates", "cannot be used together with tasks.corpus")
	case t.Templates == nil && t.Corpus == "":
		v.add("tasks.corpus", "required (\"builtin\", \"bench\" or a folder), or give tasks.templates or tasks.from_campaign")
	case t.Corpus != "" && t.Corpus != CorpusBuiltin && t.Corpus != CorpusBench:
		v.dir(opts, "tasks.corpus", t.Corpus)
	}
	if tp := t.Templates; tp != nil {
		if tp.Dir == "" {
			v.add("tasks.templates.dir", "required (\"builtin\" or a folder)")
		} else if tp.Dir != "builtin" {
			v.dir(opts, "tasks.templates.dir", tp.Dir)
		}
		for _, name := range sortedKeys(tp.Pools) {
			p := "tasks.templates.pools." + name
			if name == "" {
				v.add(p, "pool variable name is empty")
			}
			if len(tp.Pools[name]) == 0 {
				v.add(p, "pool %q has no values", name)
			}
		}
	}
	v.labels("tasks.categories", t.Categories)
	v.atLeast("tasks.limit", int64(t.Limit), 0)
	v.atLeast("tasks.samples_per_task", int64(t.SamplesPerTask), 1)
}

func (v *validator) labels(path string, labels []string) {
	seen := map[string]bool{}
	for i, c := range labels {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case c == "":
			v.add(p, "empty category")
		case seen[c]:
			v.add(p, "duplicate category %q", c)
		}
		seen[c] = true
	}
}

func (v *validator) dir(opts Options, path, p string) {
	if !opts.CheckPaths {
		return
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		v.add(path, "no such folder: %s", p)
	case !fi.IsDir():
		v.add(path, "not a folder: %s", p)
	}
}

func (v *validator) models(opts Options) {
	s := v.s
	if len(s.Models) == 0 {
		v.add("models", "at least one model is required")
	}
	first := map[string]string{} // name -> path of first use
	for i := range s.Models {
		m := &s.Models[i]
		p := modelPath(i)
		if v.modelFields(p, m, first) {
			v.modelKind(p, m, opts)
		}
	}
}

// modelFields checks the fields of the model at path p that every kind
// has; it reports whether the kind is known (and its own fields worth
// checking). first maps the names seen to the path of their first use.
func (v *validator) modelFields(p string, m *Model, first map[string]string) (kindOK bool) {
	s := v.s
	v.name(p+".name", m.Name, modelNameRE, "[A-Za-z0-9._-]+")
	if m.Name != "" {
		if prev, dup := first[m.Name]; dup {
			v.add(p+".name", "duplicate model name %q (first at line %d)", m.Name, s.lineOf(prev))
		} else {
			first[m.Name] = p + ".name"
		}
	}

	kindOK = false
	if m.Kind == "" {
		v.add(p+".kind", "required (one of %s)", strings.Join(Kinds(), ", "))
	} else {
		kindOK = v.oneOf(p+".kind", "kind", m.Kind, Kinds())
	}

	if m.BaseURL != "" {
		v.url(p+".base_url", m.BaseURL)
	}
	if m.APIKeyEnv != "" && !envNameRE.MatchString(m.APIKeyEnv) {
		// Never echo the value: it may be the key itself.
		v.add(p+".api_key_env", "must name an environment variable (such as OPENAI_API_KEY), not hold the key itself")
	}
	v.atLeast(p+".concurrency", int64(m.Concurrency), 1)
	if m.Tools != "" {
		v.oneOf(p+".tools", "tools mode", m.Tools, ToolModes())
	} else {
		v.add(p+".tools", "required (one of %s)", strings.Join(ToolModes(), ", "))
	}
	if m.Timeout <= 0 {
		v.add(p+".timeout", "must be > 0")
	}
	if m.Latency < 0 {
		v.add(p+".latency", "must be >= 0")
	}
	return kindOK
}

// modelKind checks the fields that m's kind needs, and those it has no
// use for.
func (v *validator) modelKind(p string, m *Model, opts Options) {
	need := func(field, value string) {
		if value == "" {
			v.add(p+"."+field, "required for kind %s", m.Kind)
		}
	}
	only := func(field string, present bool, kind string) {
		if present && m.Kind != kind {
			v.add(p+"."+field, "only used by kind %s", kind)
		}
	}
	switch m.Kind {
	case KindOpenAI:
		need("base_url", m.BaseURL)
	case KindOllama:
		need("base_url", m.BaseURL)
		v.atLeast(p+".num_ctx", int64(m.NumCtx), 1)
	case KindLangchain:
		if m.Provider == "" {
			v.add(p+".provider", "required for kind langchain (one of %s)", strings.Join(LangchainProviders(), ", "))
		} else if m.Provider == "ollama" {
			v.add(p+".provider", "use kind ollama instead (langchaingo's ollama provider has no tool calling)")
		} else {
			v.oneOf(p+".provider", "provider", m.Provider, LangchainProviders())
		}
	case KindScript:
		need("script", m.Script)
		if m.BaseURL != "" {
			v.add(p+".base_url", "not used by kind script")
		}
		if m.Script != "" && opts.CheckPaths {
			if fi, err := os.Stat(m.Script); err != nil {
				v.add(p+".script", "no such file: %s", m.Script)
			} else if !fi.Mode().IsRegular() {
				v.add(p+".script", "not a regular file: %s", m.Script)
			}
		}
	case KindHipify:
		// A translator in process: nothing to reach, no model to name.
		for _, f := range []struct {
			field   string
			present bool
		}{{"base_url", m.BaseURL != ""}, {"model", m.Model != ""}, {"api_key_env", m.APIKeyEnv != ""}, {"think", m.Think != nil}} {
			if f.present {
				v.add(p+"."+f.field, "not used by kind hipify")
			}
		}
		if m.Tools != "" && m.Tools != ToolsNone {
			v.add(p+".tools", "kind hipify calls no tools: leave it out or set none")
		}
	}
	if m.Kind != KindScript && m.Kind != KindHipify {
		need("model", m.Model)
	}
	only("provider", m.Provider != "", KindLangchain)
	only("script", m.Script != "", KindScript)
	only("latency", m.Latency != 0, KindScript)
	only("num_ctx", m.NumCtx != 0, KindOllama)
	only("keep_alive", m.KeepAlive != nil, KindOllama)
}

func (v *validator) url(path, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.add(path, "not a valid URL: %v", err.(*url.Error).Err)
	case u.Scheme != "http" && u.Scheme != "https":
		v.add(path, "must be an http:// or https:// URL")
	case u.Host == "" || u.Hostname() == "":
		v.add(path, "URL has no host")
	case u.User != nil:
		v.add(path, "must not hold credentials (use api_key_env)")
	}
}

func (v *validator) rest() {
	s := v.s
	if s.Sampling.Temperature != nil {
		v.inRange("sampling.temperature", *s.Sampling.Temperature, 0, 2, false)
	}
	if s.Sampling.TopP != nil {
		v.inRange("sampling.top_p", *s.Sampling.TopP, 0, 1, true)
	}
	v.atLeast("sampling.max_tokens", int64(s.Sampling.MaxTokens), 1)
	v.atLeast("concurrency", int64(s.Concurrency), 1)

	v.atLeast("budgets.tasks", int64(s.Budgets.Tasks), 0)
	v.atLeast("budgets.tokens", s.Budgets.Tokens, 0)
	if s.Budgets.WallTime < 0 {
		v.add("budgets.wall_time", "must be >= 0")
	}

	sb := s.Sandbox
	for _, d := range []struct {
		path string
		d    Duration
	}{{"sandbox.wall_time", sb.WallTime}, {"sandbox.cpu_time", sb.CPUTime}} {
		if d.d <= 0 {
			v.add(d.path, "must be > 0")
		}
	}
	v.atLeast("sandbox.memory_mb", int64(sb.MemoryMB), 1)
	v.atLeast("sandbox.processes", int64(sb.Processes), 1)
	v.atLeast("sandbox.output_kb", int64(sb.OutputKB), 1)
	v.atLeast("sandbox.file_size_mb", int64(sb.FileSizeMB), 1)

	if n := s.GPU.SlotsPerDevice; n < 1 || n > MaxSlotsPerDevice {
		v.add("gpu.slots_per_device", "must be 1-%d, got %d", MaxSlotsPerDevice, n)
	}
	v.atLeast("gpu.devices", int64(s.GPU.Devices), 0)

	v.atLeast("agent.repair_turns", int64(s.Agent.RepairTurns), 0)
	v.atLeast("agent.max_tool_calls", int64(s.Agent.MaxToolCalls), 0)

	r := s.Retry
	v.atLeast("retry.max_attempts", int64(r.MaxAttempts), 1)
	if r.BaseDelay < 0 {
		v.add("retry.base_delay", "must be >= 0")
	}
	if r.MaxDelay < r.BaseDelay {
		v.add("retry.max_delay", "must be >= retry.base_delay (%s)", r.BaseDelay)
	}

	v.curation()

	rf := s.Refinement
	v.atLeast("refinement.rounds", int64(rf.Rounds), 0)
	v.inRange("refinement.threshold", rf.Threshold, 0, 1, false)
	v.atLeast("refinement.min_evidence", int64(rf.MinEvidence), 1)
	v.atLeast("refinement.factor", int64(rf.Factor), 1)
	v.inRange("refinement.plateau", rf.Plateau, 0, 1, false)
	v.labels("refinement.categories", rf.Categories)
	switch {
	case rf.Synthesizer == "":
		if len(s.Models) > 0 {
			v.add("refinement.synthesizer", "required")
		}
	default:
		if _, ok := s.Model(rf.Synthesizer); !ok {
			names := make([]string, 0, len(s.Models))
			for _, m := range s.Models {
				if !slices.Contains(names, m.Name) {
					names = append(names, m.Name)
				}
			}
			v.oneOf("refinement.synthesizer", "model", rf.Synthesizer, names)
		}
	}
}

func (v *validator) curation() {
	cu := v.s.Curation
	v.atLeast("curation.shingle", int64(cu.Shingle), 1)
	v.atLeast("curation.permutations", int64(cu.Permutations), 1)
	v.atLeast("curation.bands", int64(cu.Bands), 1)
	v.atLeast("curation.rows", int64(cu.Rows), 1)
	if cu.Bands > 0 && cu.Rows > 0 && cu.Bands*cu.Rows != cu.Permutations {
		v.add("curation.bands", "bands x rows (%d x %d) must equal curation.permutations (%d)", cu.Bands, cu.Rows, cu.Permutations)
	}
	if cu.Permutations > 4096 {
		v.add("curation.permutations", "must be <= 4096")
	}
	if cu.Shingle > 64 {
		v.add("curation.shingle", "must be <= 64")
	}
	v.inRange("curation.threshold", cu.Threshold, 0, 1, true)
	v.oneOf("curation.select", "selection policy", cu.Select, []string{"all-verified", "best-per-task", "concur"})
	if cu.KeepSpeedup < 0 {
		v.add("curation.keep_speedup", "must be >= 0")
	}
	if cu.SingleShare < 0 || cu.SingleShare >= 1 {
		v.add("curation.single_share", "must be in [0, 1)")
	}
	if cu.MinSpeedup < 0 || math.IsNaN(cu.MinSpeedup) || math.IsInf(cu.MinSpeedup, 0) {
		v.add("curation.min_speedup", "must be >= 0 (0: no speed-up required)")
	}
	if cu.Stream != "" {
		v.oneOf("curation.stream", "stream policy", cu.Stream, []string{"any", "prefer", "require"})
	}
	if cu.Validation != nil && (*cu.Validation < 0 || *cu.Validation >= 1) {
		v.add("curation.validation", "must be in [0, 1)")
	}
	if d := cu.Difficulty; d != nil && (len(d) != 2 || d[0] <= 0 || d[1] < d[0]) {
		v.add("curation.difficulty", "want two thresholds [easy, hard] in tokens, 0 < easy <= hard")
	}
	for i, b := range cu.Benchmarks {
		if b == "" {
			v.add(fmt.Sprintf("curation.benchmarks[%d]", i), "empty folder name")
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
