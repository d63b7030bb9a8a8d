package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/metrics"
	"github.com/kiln-dev/kiln/runs/notify"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// metricSample is one time series value of a scrape; histograms are flattened
// into their _bucket, _sum and _count series as in the text format.
type metricSample struct {
	name   string
	labels map[string]string
	value  float64
}

func (s metricSample) key() string {
	keys := make([]string, 0, len(s.labels))
	for k := range s.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(s.name)
	for _, k := range keys {
		fmt.Fprintf(&b, ",%s=%q", k, s.labels[k])
	}
	return b.String()
}

// metricScrape is one scrape's samples and the family names it held.
type metricScrape struct {
	samples  []metricSample
	families map[string]dto.MetricType
}

func flattenFamilies(fams map[string]*dto.MetricFamily) metricScrape {
	sc := metricScrape{families: map[string]dto.MetricType{}}
	for name, f := range fams {
		sc.families[name] = f.GetType()
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(n string, v float64, extra ...string) {
				ls := map[string]string{}
				for k, v := range labels {
					ls[k] = v
				}
				for i := 0; i+1 < len(extra); i += 2 {
					ls[extra[i]] = extra[i+1]
				}
				sc.samples = append(sc.samples, metricSample{name: n, labels: ls, value: v})
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				add(name+"_count", float64(h.GetSampleCount()))
				add(name+"_sum", h.GetSampleSum())
				for _, b := range h.GetBucket() {
					add(name+"_bucket", float64(b.GetCumulativeCount()), "le", fmt.Sprint(b.GetUpperBound()))
				}
			case dto.MetricType_SUMMARY:
				add(name+"_count", float64(m.GetSummary().GetSampleCount()))
				add(name+"_sum", m.GetSummary().GetSampleSum())
			}
		}
	}
	return sc
}

// sum adds the values of the series called name whose labels include
// match.
func (sc metricScrape) sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range sc.samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			total += s.value
		}
	}
	return total
}

// by sums name's series by the values of label.
func (sc metricScrape) by(name, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range sc.samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
			}
		}
		if ok {
			out[s.labels[label]] += s.value
		}
	}
	return out
}

// getMetrics scrapes url (the Prometheus text format).
func getMetrics(ctx context.Context, url string) (metricScrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return metricScrape{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return metricScrape{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return metricScrape{}, fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return metricScrape{}, fmt.Errorf("content type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return metricScrape{}, fmt.Errorf("parse metrics: %w", err)
	}
	return flattenFamilies(fams), nil
}

// gatherMetrics reads a registry directly.
func gatherMetrics(t *testing.T, m *metrics.Prometheus) metricScrape {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	return flattenFamilies(byName)
}

// writeCorpusDirs writes corpus items as folders under dir.
func writeCorpusDirs(t *testing.T, dir string, items ...prompts.CorpusItem) {
	t.Helper()
	for _, it := range items {
		d := filepath.Join(dir, it.ID)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range it.Files {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		meta, _ := json.Marshal(map[string]any{"function": it.Function, "categories": it.Categories})
		if err := os.WriteFile(filepath.Join(d, "meta.json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMetricsServe runs "kiln serve" with two campaigns on the c2x86
// lane, a script model (right, wrong and unassemblable answers) and a
// streaming OpenAI-style server whose first request fails with a 500, and
// a webhook receiver. It scrapes GET /metrics all along: kiln's counters
// never go down, they move while the first campaign runs and its queue
// drains; at the end the attempt, verdict, token, call, stage, fault and
// compile cache figures equal what the store (and the cache folder) hold,
// and the webhook got a done event per campaign with the store's counts.
func TestMetricsServe(t *testing.T) {
	// Parallel: its daemon has a registry, a sandbox runner and a data
	// folder of its own (runs/metrics.New), so other tests' runs do not
	// move its figures.
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")

	// Campaign 1: a script model, 3 items x 4 samples, 300 ms per answer.
	type scripted struct {
		id, kind string
	}
	var lines []string
	var items []prompts.CorpusItem
	for _, x := range []scripted{{"int_001_gcd_unsigned", "right"}, {"int_002_lcm_checked", "wrong"}, {"int_003_isqrt_newton", "garbage"}} {
		it := corpusItem(t, x.id)
		right := gccAsm(t, it, "-O0")
		resp := map[string]string{
			"right":   "```asm\n" + right + "```",
			"wrong":   "```asm\n" + mutate(t, right, it.Function) + "```",
			"garbage": "```asm\n\t.globl " + it.Function + "\n" + it.Function + ":\n\tthis is not an instruction %%%\n```",
		}[x.kind]
		b, _ := json.Marshal(map[string]string{"match": "`" + it.Function + "`", "response": resp})
		lines = append(lines, string(b))
		items = append(items, it)
	}
	if err := os.WriteFile(filepath.Join(dir, "answers.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeCorpusDirs(t, filepath.Join(dir, "scripted"), items...)
	spec1 := []byte("name: scripted\nlane: c2x86\ntasks: {corpus: scripted, samples_per_task: 4}\n" +
		"models: [{name: m, kind: script, script: answers.jsonl, latency: 300ms}]\nconcurrency: 2\nagent: {repair_turns: 0}\n")

	// Campaign 2: a streaming server; one item's first request gets a 500.
	bs := []behaviour{
		{id: "int_004_digit_sum", turns: []string{"right"}, fault: "500", pass: true},
		{id: "int_006_mod_pow", turns: []string{"right"}, pass: true},
	}
	fake := newFakeLLM(t, bs)
	llm := httptest.NewServer(fake.openai())
	defer llm.Close()
	writeCorpusDirs(t, filepath.Join(dir, "streamed"), corpusItem(t, bs[0].id), corpusItem(t, bs[1].id))
	spec2 := []byte(fmt.Sprintf("name: streamed\nlane: c2x86\ntasks: {corpus: streamed}\n"+
		"models: [{name: vllm, kind: openai, base_url: %s/v1, model: qwen-test, concurrency: 2}]\n"+
		"concurrency: 2\nagent: {repair_turns: 0}\nretry: {max_attempts: 3, base_delay: 5ms, max_delay: 20ms}\n", llm.URL))

	// The webhook receiver.
	hooks := make(chan notify.Payload, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p notify.Payload
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		hooks <- p
	}))
	defer hook.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := serveKiln(ctx, t, func(k string) string {
		if k == "KILN_TEST_HOOK" {
			return hook.URL + "/hooks/secret-token"
		}
		return ""
	}, "--data", data, "--spec-root", dir, "--webhook-env", "KILN_TEST_HOOK")
	addr, cl, stderr := srv.addr, srv.cl, srv.stderr
	metricsURL := "http://" + addr + "/metrics"
	first, err := getMetrics(ctx, metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	if first.sum("kiln_attempts_started_total", nil) != 0 {
		t.Fatal("attempts counted before any campaign")
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "kiln_campaigns"} {
		if _, ok := first.families[name]; !ok {
			t.Errorf("no %s in the first scrape", name)
		}
	}

	// Scrape every 100 ms while the campaigns run.
	var (
		mu      sync.Mutex
		scrapes []metricScrape
		errs    []error
	)
	stopScraping := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		for {
			sc, err := getMetrics(ctx, metricsURL)
			mu.Lock()
			if err != nil {
				errs = append(errs, err)
			} else {
				scrapes = append(scrapes, sc)
			}
			mu.Unlock()
			select {
			case <-stopScraping:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	watch := func(spec []byte) api.CampaignInfo {
		t.Helper()
		info, err := cl.Submit(ctx, spec)
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		ch, err := cl.Watch(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		var last api.Progress
		for p := range ch {
			last = p
		}
		if last.State != "done" {
			t.Fatalf("campaign %s ended %+v: %s", info.Name, last, stderr.String())
		}
		return info
	}
	c1 := watch(spec1)
	mu.Lock()
	during := len(scrapes)
	mu.Unlock()
	c2 := watch(spec2)
	close(stopScraping)
	<-scraped
	final, err := getMetrics(ctx, metricsURL)
	if err != nil {
		t.Fatal(err)
	}

	// The webhook: a done event per campaign (the receiver's URL path
	// holds a secret that must not be logged).
	got := map[string]notify.Payload{}
	for len(got) < 2 {
		select {
		case p := <-hooks:
			got[p.Campaign] = p
		case <-time.After(20 * time.Second):
			t.Fatalf("webhook calls: %v", got)
		}
	}

	srv.stop(t, 60*time.Second)
	if strings.Contains(stderr.String(), "secret-token") {
		t.Error("the webhook URL was logged")
	}

	// During the run: no scrape failed, kiln's counters never went down,
	// and the first campaign was seen half way with its queue draining.
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("%d scrapes failed, first: %v", len(errs), errs[0])
	}
	all := append(append([]metricScrape{first}, scrapes...), final)
	monotonic := regexp.MustCompile(`^kiln_.*(_total|_count|_sum|_bucket)$`)
	prev := map[string]float64{}
	for i, sc := range all {
		seen := map[string]bool{}
		for _, s := range sc.samples {
			if !monotonic.MatchString(s.name) {
				continue
			}
			k := s.key()
			seen[k] = true
			if p, ok := prev[k]; ok && s.value < p {
				t.Errorf("scrape %d: %s went down from %v to %v", i, k, p, s.value)
			}
			prev[k] = s.value
		}
		for k := range prev {
			if !seen[k] {
				t.Errorf("scrape %d: %s vanished", i, k)
			}
		}
	}
	halfway, queued := false, 0.0
	lastVerdicts := 0.0
	for _, sc := range scrapes[:during] {
		v := sc.sum("kiln_verdicts_total", nil)
		if v > 0 && v < 12 {
			halfway = true
		}
		if v < lastVerdicts {
			t.Errorf("verdicts went down: %v -> %v", lastVerdicts, v)
		}
		lastVerdicts = v
		queued = math.Max(queued, sc.sum("kiln_tasks", map[string]string{"campaign": c1.ID, "state": "queued"}))
	}
	if !halfway || queued == 0 {
		t.Errorf("no scrape (of %d) saw the first campaign half way (verdicts 0 < v < 12) with tasks queued (max %v)", during, queued)
	}
	if v := final.sum("kiln_tasks", map[string]string{"campaign": c1.ID}); v != 0 {
		t.Errorf("a done campaign still has a queue gauge: %v", v)
	}
	if final.sum("kiln_campaigns", map[string]string{"state": "done"}) != 2 {
		t.Errorf("kiln_campaigns{state=done} = %v", final.sum("kiln_campaigns", map[string]string{"state": "done"}))
	}

	// At the end: the metrics equal the store.
	st, err := runs.Open(context.Background(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sctx := context.Background()
	var (
		counts       runs.Counts
		attempts     int
		calls        int
		classes      = map[string]float64{} // model/class
		tokens       = map[string]float64{} // model/kind
		stages       = map[string]float64{} // stage
		faults       = map[string]float64{}
		callsByModel = map[string]float64{}
	)
	for _, info := range []api.CampaignInfo{c1, c2} {
		n, err := st.Counts(sctx, info.ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		counts.Done += n.Done
		counts.PromptTokens += n.PromptTokens
		counts.CompletionTokens += n.CompletionTokens
		counts.ReasoningTokens += n.ReasoningTokens
		p := got[info.ID]
		if p.Event != notify.EventDone || p.Name != info.Name || p.Lane != "c2x86" ||
			p.Counts.Done != n.Done || p.Counts.Pass != n.Pass || p.Counts.Fail != n.Fail || p.Counts.Tokens != n.PromptTokens+n.CompletionTokens {
			t.Errorf("webhook payload %+v, store %+v", p, n)
		}
		tasks, err := st.Tasks(sctx, info.ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			as, err := st.Attempts(sctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			attempts += len(as)
		}
		res, err := st.Results(sctx, info.ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			var ss []tools.Stage
			if err := json.Unmarshal(r.Verdict.Stages, &ss); err != nil {
				t.Fatal(err)
			}
			cls := engine.VerdictClass(tools.Verdict{Pass: r.Verdict.Pass, Class: tools.FailureClass(r.Verdict.Class), Stages: ss})
			m := r.Attempt.Model
			classes[m+"/"+cls]++
			u := r.Attempt.Usage
			tokens[m+"/prompt"] += float64(u.PromptTokens)
			tokens[m+"/completion"] += float64(u.CompletionTokens)
			tokens[m+"/reasoning"] += float64(u.ReasoningTokens)
			calls += u.Calls
			callsByModel[m] += float64(u.Calls)
			for _, s := range ss {
				if !s.Skipped && s.Duration > 0 {
					stages[s.Name]++
				}
			}
		}
		fs, err := st.Faults(sctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		for c, n := range fs {
			faults[c] += float64(n)
		}
	}
	if counts.Done != 14 || attempts != 14 {
		t.Fatalf("store: %d done, %d attempts; want 14", counts.Done, attempts)
	}
	lane := map[string]string{"lane": "c2x86"}
	if v := final.sum("kiln_verdicts_total", lane); v != float64(counts.Done) {
		t.Errorf("kiln_verdicts_total %v, store %d", v, counts.Done)
	}
	if v := final.sum("kiln_attempts_total", map[string]string{"outcome": "judged"}); v != float64(attempts) {
		t.Errorf("judged attempts %v, store %d", v, attempts)
	}
	if s, e := final.sum("kiln_attempts_started_total", lane), final.sum("kiln_attempts_total", lane); s != e || s != float64(attempts) {
		t.Errorf("attempts started %v, ended %v, store %d", s, e, attempts)
	}
	gotClasses := map[string]float64{}
	for _, s := range final.samples {
		if s.name == "kiln_verdicts_total" {
			gotClasses[s.labels["model"]+"/"+s.labels["class"]] += s.value
		}
	}
	if fmt.Sprint(gotClasses) != fmt.Sprint(classes) {
		t.Errorf("verdicts by model/class %v, store %v", gotClasses, classes)
	}
	scriptModel := "script:" + filepath.Join(dir, "answers.jsonl")
	for _, want := range []string{scriptModel + "/pass", scriptModel + "/wrong_output", scriptModel + "/assemble_error", "qwen-test/pass"} {
		if classes[want] == 0 {
			t.Errorf("no %s verdict in the store: %v", want, classes)
		}
	}
	gotTokens := map[string]float64{}
	for _, s := range final.samples {
		if s.name == "kiln_tokens_total" {
			gotTokens[s.labels["model"]+"/"+s.labels["kind"]] += s.value
		}
	}
	if fmt.Sprint(gotTokens) != fmt.Sprint(tokens) {
		t.Errorf("tokens by model/kind %v, store %v", gotTokens, tokens)
	}
	for kind, n := range map[string]int64{"prompt": counts.PromptTokens, "completion": counts.CompletionTokens, "reasoning": counts.ReasoningTokens} {
		if v := final.sum("kiln_tokens_total", map[string]string{"kind": kind}); v != float64(n) || n == 0 {
			t.Errorf("%s tokens %v, store %d", kind, v, n)
		}
	}
	if v := final.sum("kiln_model_call_duration_seconds_count", nil); v != float64(calls) {
		t.Errorf("model calls %v, store %d", v, calls)
	}
	if got := final.by("kiln_model_call_duration_seconds_count", "endpoint", map[string]string{"model": "qwen-test"}); got["vllm"] != callsByModel["qwen-test"] {
		t.Errorf("qwen-test calls by endpoint %v, store %v", got, callsByModel["qwen-test"])
	}
	// Only the streaming server has a time to first token.
	if v := final.sum("kiln_model_ttft_seconds_count", map[string]string{"model": "qwen-test", "endpoint": "vllm"}); v != callsByModel["qwen-test"] || v == 0 {
		t.Errorf("ttft count %v, want %v", v, callsByModel["qwen-test"])
	}
	if v := final.sum("kiln_model_ttft_seconds_count", map[string]string{"model": scriptModel}); v != 0 {
		t.Errorf("ttft of a script model: %v", v)
	}
	if got := final.by("kiln_model_faults_total", "class", lane); fmt.Sprint(got) != fmt.Sprint(faults) || faults["server_error"] != 1 {
		t.Errorf("faults %v, store %v", got, faults)
	}
	if got := final.by("kiln_sandbox_stage_duration_seconds_count", "stage", lane); fmt.Sprint(got) != fmt.Sprint(stages) || len(stages) < 3 {
		t.Errorf("stage runs %v, store %v", got, stages)
	}
	// One compile cache miss per reference computed: one file each in
	// the lane's cache folder.
	entries := 0
	err = filepath.WalkDir(filepath.Join(data, "cache", "c2x86"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			entries++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	miss := final.sum("kiln_compile_cache_lookups_total", map[string]string{"lane": "c2x86", "result": "miss"})
	hit := final.sum("kiln_compile_cache_lookups_total", map[string]string{"lane": "c2x86", "result": "hit"})
	if miss != float64(entries) || entries == 0 || hit == 0 || hit+miss > float64(attempts) {
		t.Errorf("compile cache: %v misses, %v hits; %d entries on disk, %d attempts", miss, hit, entries, attempts)
	}
	t.Logf("%d scrapes during the first campaign; verdicts %v; tokens %v; stages %v; faults %v; cache %v hits %v misses",
		during, classes, tokens, stages, faults, hit, miss)
	if v := final.sum("kiln_gpu_slots", nil); v != 0 {
		t.Errorf("GPU slots on a c2x86-only daemon: %v", v)
	}
}

// TestMetricsHooks drives every hook of metrics.Prometheus and reads the registry.
func TestMetricsHooks(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil, nil)
	m.AttemptStarted("c2x86")
	m.AttemptStarted("c2x86")
	m.AttemptEnded(engine.AttemptStats{Lane: "c2x86", Model: "qwen", Outcome: engine.OutcomeJudged, Class: "pass",
		Duration: 2 * time.Second, Stages: []tools.Stage{
			{Name: "compile", OK: true, Duration: 40 * time.Millisecond},
			{Name: "run", Skipped: true},
			{Name: "extract", OK: true}, // no timing: left out
		}})
	m.AttemptEnded(engine.AttemptStats{Lane: "c2x86", Outcome: engine.OutcomeRequeued, Duration: time.Second})
	m.ModelCall("qwen", "vllm", agent.Usage{PromptTokens: 100, CompletionTokens: 50, ReasoningTokens: 7, Latency: 3 * time.Second, TTFT: 200 * time.Millisecond})
	m.ModelCall("qwen", "", agent.Usage{PromptTokens: 1, Latency: time.Second}) // not streamed: no TTFT
	m.ModelFault("c2x86", agent.FaultRateLimited)
	m.CompileCache("cuda-synth", true)
	m.CompileCache("cuda-synth", false)
	m.CompileCache("cuda-synth", true)
	m.GPUSlots("cuda-synth", sandboxes.SlotIdle, 2)
	m.GPUSlots("cuda-synth", sandboxes.SlotIdle, -1)
	m.GPUSlots("cuda-synth", sandboxes.SlotBusy, 1)

	sc := gatherMetrics(t, m)
	checks := []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"kiln_attempts_started_total", map[string]string{"lane": "c2x86"}, 2},
		{"kiln_attempts_total", map[string]string{"outcome": "judged", "model": "qwen"}, 1},
		{"kiln_attempts_total", map[string]string{"outcome": "requeued", "model": metrics.LabelUnknown}, 1},
		{"kiln_attempt_duration_seconds_sum", map[string]string{"lane": "c2x86"}, 3},
		{"kiln_verdicts_total", nil, 1},
		{"kiln_verdicts_total", map[string]string{"class": "pass", "model": "qwen", "lane": "c2x86"}, 1},
		{"kiln_sandbox_stage_duration_seconds_count", nil, 1},
		{"kiln_sandbox_stage_duration_seconds_count", map[string]string{"stage": "compile"}, 1},
		{"kiln_tokens_total", map[string]string{"kind": "prompt"}, 101},
		{"kiln_tokens_total", map[string]string{"kind": "completion"}, 50},
		{"kiln_tokens_total", map[string]string{"kind": "reasoning"}, 7},
		{"kiln_model_call_duration_seconds_count", nil, 2},
		{"kiln_model_call_duration_seconds_count", map[string]string{"endpoint": metrics.LabelUnknown}, 1},
		{"kiln_model_call_duration_seconds_sum", nil, 4},
		{"kiln_model_ttft_seconds_count", map[string]string{"endpoint": "vllm"}, 1},
		{"kiln_model_ttft_seconds_count", nil, 1},
		{"kiln_model_faults_total", map[string]string{"class": "rate_limited"}, 1},
		{"kiln_compile_cache_lookups_total", map[string]string{"result": "hit"}, 2},
		{"kiln_compile_cache_lookups_total", map[string]string{"result": "miss"}, 1},
		{"kiln_gpu_slots", map[string]string{"state": "idle"}, 1},
		{"kiln_gpu_slots", map[string]string{"state": "busy"}, 1},
	}
	for _, c := range checks {
		if got := sc.sum(c.name, c.match); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s%v = %v, want %v", c.name, c.match, got, c.want)
		}
	}
	if sc.sum("kiln_sandbox_stage_duration_seconds_count", map[string]string{"stage": "run"}) != 0 {
		t.Error("a skipped stage was timed")
	}

	// The hooks as the packages call them: a GPU slot pool and a compile
	// cache reporting to the same metrics.
	slots := sandboxes.NewGPUSlots(2, "ptx2cuda", m)
	if err := slots.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	sc = gatherMetrics(t, m)
	if sc.sum("kiln_gpu_slots", map[string]string{"lane": "ptx2cuda", "state": "busy"}) != 1 ||
		sc.sum("kiln_gpu_slots", map[string]string{"lane": "ptx2cuda", "state": "idle"}) != 1 {
		t.Errorf("ptx2cuda slots: %v", sc.by("kiln_gpu_slots", "state", map[string]string{"lane": "ptx2cuda"}))
	}
	slots.Release()
	slots.Close()
	sc = gatherMetrics(t, m)
	if v := sc.sum("kiln_gpu_slots", map[string]string{"lane": "ptx2cuda"}); v != 0 {
		t.Errorf("ptx2cuda slots after close: %v", v)
	}
	cache, err := toolchain.NewCache(toolchain.CacheConfig{Metrics: m, Name: "sass2rdna"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, _, err := cache.Do(context.Background(), toolchain.Key("x"), func(context.Context) (*toolchain.Entry, bool, error) {
			return &toolchain.Entry{}, true, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	sc = gatherMetrics(t, m)
	if h, ms := sc.sum("kiln_compile_cache_lookups_total", map[string]string{"lane": "sass2rdna", "result": "hit"}),
		sc.sum("kiln_compile_cache_lookups_total", map[string]string{"lane": "sass2rdna", "result": "miss"}); h != 2 || ms != 1 {
		t.Errorf("sass2rdna cache: %v hits %v misses, want 2 and 1", h, ms)
	}
}

// TestMetricsLabelCap: model and endpoint labels take at most
// metrics.MaxModelLabels distinct values; later ones read "other".
func TestMetricsLabelCap(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil, nil)
	for i := range metrics.MaxModelLabels + 10 {
		m.ModelCall(fmt.Sprintf("model-%d", i), "ep", agent.Usage{PromptTokens: 1})
	}
	m.ModelCall("model-0", "ep", agent.Usage{PromptTokens: 1}) // seen: keeps its name
	models := gatherMetrics(t, m).by("kiln_tokens_total", "model", map[string]string{"kind": "prompt"})
	if len(models) != metrics.MaxModelLabels+1 || models[metrics.LabelOther] != 10 || models["model-0"] != 2 {
		t.Fatalf("%d model labels, other %v, model-0 %v", len(models), models[metrics.LabelOther], models["model-0"])
	}
}

// TestMetricsStoreCollector: queue gauges per running campaign and
// campaigns by state, read from a real store at scrape time.
func TestMetricsStoreCollector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := runs.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: "nightly", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddTasks(ctx, c.ID, []runs.Task{{Key: "a", Lane: "c2x86"}, {Key: "b", Lane: "c2x86"}, {Key: "c", Lane: "c2x86"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetCampaignState(ctx, c.ID, runs.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, c.ID, "w", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateCampaign(ctx, runs.Campaign{Name: "waiting", Lane: "cuda-synth"}); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(st, nil)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	sc, err := getMetrics(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]string{"campaign": c.ID, "name": "nightly", "lane": "c2x86"}
	if q, l := sc.by("kiln_tasks", "state", mine)["queued"], sc.by("kiln_tasks", "state", mine)["leased"]; q != 2 || l != 1 {
		t.Errorf("kiln_tasks queued %v leased %v, want 2 and 1", q, l)
	}
	if got := sc.by("kiln_campaigns", "state", nil); got["running"] != 1 || got["queued"] != 1 || got["done"] != 0 || len(got) != 5 {
		t.Errorf("kiln_campaigns %v", got)
	}
	// A store that fails leaves the queue gauges out, not the scrape.
	st.Close()
	sc, err = getMetrics(ctx, srv.URL)
	if err != nil {
		t.Fatalf("scrape with a closed store: %v", err)
	}
	if _, ok := sc.families["go_goroutines"]; !ok {
		t.Error("a failing store collector broke the scrape")
	}
}

// grafanaDashboard is the part of a Grafana dashboard the test reads.
type grafanaDashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Panels        []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ H, W, X, Y int } `json:"gridPos"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// promqlMetricRef finds metric names in PromQL: kiln's and the Go and process
// collectors'.
var promqlMetricRef = regexp.MustCompile(`\b((?:kiln|go|process)_[a-zA-Z0-9_]+)`)

// TestMetricsGrafanaDashboard: the shipped dashboard is valid Grafana
// JSON whose panels all query Prometheus, every metric it queries is one
// that kiln registers, and every kiln metric has a panel.
func TestMetricsGrafanaDashboard(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("grafana", "kiln-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(raw) {
		t.Fatal("dashboard is not valid JSON")
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 30 || len(d.Panels) == 0 {
		t.Fatalf("dashboard header: title %q uid %q schema %d, %d panels", d.Title, d.UID, d.SchemaVersion, len(d.Panels))
	}
	var exprs []string
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("panel %q: id %d missing or reused", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: grid position %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || p.Datasource == nil || p.Datasource.Type != "prometheus" || len(p.Targets) == 0 {
			t.Errorf("panel %d %q: no title, Prometheus data source or target", p.ID, p.Title)
		}
		for _, tg := range p.Targets {
			if tg.RefID == "" || strings.TrimSpace(tg.Expr) == "" || strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") {
				t.Errorf("panel %q: target %+v", p.Title, tg)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition, string(v.Query))
	}

	// Every family kiln registers, each hook driven once so that every
	// vector has a series; the store collector over a running campaign.
	ctx := context.Background()
	st, err := runs.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: "n", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetCampaignState(ctx, c.ID, runs.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(st, nil)
	m.AttemptStarted("c2x86")
	m.AttemptEnded(engine.AttemptStats{Lane: "c2x86", Outcome: engine.OutcomeJudged, Class: "pass", Duration: time.Second,
		Stages: []tools.Stage{{Name: "compile", Duration: time.Millisecond}}})
	m.ModelCall("m", "e", agent.Usage{Latency: time.Second, TTFT: time.Millisecond})
	m.ModelFault("c2x86", "timeout")
	m.CompileCache("c2x86", true)
	m.GPUSlots("cuda-synth", sandboxes.SlotIdle, 1)
	sc := gatherMetrics(t, m)

	used := map[string]bool{}
	for _, e := range exprs {
		for _, ref := range promqlMetricRef.FindAllStringSubmatch(e, -1) {
			name := ref[1]
			used[name] = true
			if _, ok := sc.families[name]; ok {
				continue
			}
			base := name
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				base = strings.TrimSuffix(base, suf)
			}
			if typ, ok := sc.families[base]; ok && base != name && typ == dto.MetricType_HISTOGRAM {
				used[base] = true
				continue
			}
			t.Errorf("the dashboard queries %s, which kiln does not register (in %q)", name, e)
		}
	}
	for name := range sc.families {
		if strings.HasPrefix(name, "kiln_") && !used[name] {
			t.Errorf("no panel shows %s", name)
		}
	}
}
