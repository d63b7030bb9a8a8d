package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/c2x86"
)

// BenchmarkLoop measures verified samples per hour of the whole loop (store,
// engine, agent, OpenAI adapter over HTTP/SSE, c2x86 verification in the
// sandbox) against a local OpenAI-compatible server that answers every call
// correctly after a fixed latency. The ceiling is concurrency / latency: the
// loop is not the bottleneck when it reaches it. Each sub-benchmark runs one
// campaign of rounds x concurrency tasks per iteration; use -benchtime=1x.
//
//	go test ./cmd/kiln -run '^$' -bench Loop -benchtime=1x
//
// KILN_BENCH_LATENCY (default 2s) and KILN_BENCH_ROUNDS (default 6) change
// the server latency and the tasks per worker. KILN_BENCH_MARGIN (default
// 2) sets the campaign's attempts in flight to margin x the endpoint's
// concurrency: an attempt holds a model slot only during its model call, so
// extra attempts verify answers while the endpoint stays busy (margin 1:
// every attempt waits for its own verification before its slot is used
// again). Results: cmd/kiln/BENCH.md.
func BenchmarkLoop(b *testing.B) {
	latency := 2 * time.Second
	if s := os.Getenv("KILN_BENCH_LATENCY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatal(err)
		}
		latency = d
	}
	rounds := 6
	if s := os.Getenv("KILN_BENCH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		rounds = n
	}
	margin := 2
	if s := os.Getenv("KILN_BENCH_MARGIN"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("KILN_BENCH_MARGIN=%q", s)
		}
		margin = n
	}
	items, err := c2x86.LoadBuiltinCorpus()
	if err != nil {
		b.Fatal(err)
	}
	items = items[:64]
	byFn := map[string]string{}
	for _, it := range items {
		byFn[it.Function] = "```asm\n" + gccAsm(b, it, "-O0") + "```"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req oaRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		user, _ := req.Messages[len(req.Messages)-1].Content.(string)
		m := funcRe.FindStringSubmatch(user)
		if m == nil {
			http.Error(w, "no function in prompt", 400)
			return
		}
		time.Sleep(latency)
		w.Header().Set("Content-Type", "text/event-stream")
		text, _ := json.Marshal(byFn[m[1]])
		fmt.Fprintf(w, "data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":\"stop\"}]}\n\n", text)
		io.WriteString(w, "data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":700,\"total_tokens\":1000}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	for _, conc := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			dir := b.TempDir()
			n := conc * rounds
			corpus := filepath.Join(dir, "corpus")
			for i := 0; i < n && i < len(items); i++ {
				it := items[i]
				d := filepath.Join(corpus, it.ID)
				if err := os.MkdirAll(d, 0o755); err != nil {
					b.Fatal(err)
				}
				meta := fmt.Sprintf(`{"function": %q, "categories": [%q]}`, it.Function, it.Categories[0])
				for name, body := range map[string]string{"meta.json": meta, "function.c": it.Files["function.c"], "driver.c": it.Files["driver.c"]} {
					if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			distinct := min(n, len(items))
			samples := (n + distinct - 1) / distinct
			yaml := fmt.Sprintf(`name: bench
lane: c2x86
tasks: {corpus: corpus, samples_per_task: %d}
models:
  - {name: fake, kind: openai, base_url: %s/v1, model: bench, concurrency: %d, tools: none}
concurrency: %d
agent: {repair_turns: 0, max_tool_calls: 0}
`, samples, srv.URL, conc, margin*conc)
			sp, err := spec.Parse([]byte(yaml), "bench.yaml", specOptions(dir))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			log := slog.New(slog.DiscardHandler)
			w := newWiring(env{getenv: func(string) string { return "" }}, log, filepath.Join(dir, "data"))
			w.cgroupParent = os.Getenv("KILN_CGROUP_PARENT") // a delegated cgroup-v2 subtree (GPU hosts)
			defer w.close()
			plan, err := w.plan(ctx, sp)
			if err != nil {
				b.Fatal(err)
			}
			// Warm the reference cache: the reference build is a one-time
			// cost per corpus item, not per sample.
			for i := 0; i < distinct; i++ {
				it := items[i]
				item := tools.Item{Lane: "c2x86", Files: it.Files, Meta: map[string]string{"function": it.Function}}
				if v, err := plan.Lane.Verify(ctx, item, byFn[it.Function][7:len(byFn[it.Function])-3]); err != nil || !v.Pass {
					b.Fatalf("warm-up verify %s: %v %+v", it.ID, err, v)
				}
			}
			var total, pass int
			var wall time.Duration
			for i := 0; i < b.N; i++ {
				st, err := runs.Open(ctx, filepath.Join(dir, fmt.Sprintf("data%d", i)), nil)
				if err != nil {
					b.Fatal(err)
				}
				c, err := st.CreateCampaign(ctx, runs.Campaign{Name: "bench", Lane: "c2x86", Spec: []byte(yaml)})
				if err != nil {
					b.Fatal(err)
				}
				eng := &engine.Engine{Store: st, Log: log}
				start := time.Now()
				cnt, err := eng.Run(ctx, c.ID, plan, nil)
				wall += time.Since(start)
				if cnt.Fail > 0 {
					res, _ := st.Results(ctx, c.ID, -1)
					for _, r := range res {
						if !r.Verdict.Pass {
							b.Logf("%s: %s at %s: %.400s", r.Task.Key, r.Verdict.Class, r.Verdict.Stage, r.Verdict.Diagnostic)
						}
					}
				}
				st.Close()
				if err != nil {
					b.Fatal(err)
				}
				total += cnt.Done
				pass += cnt.Pass
			}
			if pass != total || total != b.N*samples*distinct {
				b.Fatalf("%d of %d samples verified, want all %d", pass, total, b.N*samples*distinct)
			}
			perHour := float64(pass) / wall.Hours()
			ceiling := float64(conc) / latency.Hours()
			b.ReportMetric(perHour, "samples/h")
			b.ReportMetric(ceiling, "ceiling/h")
			b.ReportMetric(100*perHour/ceiling, "%ceiling")
			b.ReportMetric(0, "ns/op")
		})
	}
}
