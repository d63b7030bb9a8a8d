package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
)

// benchSamples is the size of the export benchmark's campaign.
const benchSamples = 100_000

// benchStore returns a store holding one campaign of benchSamples judged
// results: 20,000 tasks x 5 samples, CUDA answers of 30-60 lines, a
// system prompt, a task prompt and about 2 KB of reasoning each, 85%
// passing, one sample in ten a renamed copy of another. Building it takes
// minutes (every result is a real Claim and Finish), so it is kept in
// $KILN_BENCH_DIR (default: the temporary folder) and reused.
func benchStore(b *testing.B) (*runs.Store, string) {
	b.Helper()
	root := os.Getenv("KILN_BENCH_DIR")
	if root == "" {
		root = os.TempDir()
	}
	dir := filepath.Join(root, "kiln-dataset-bench-100k-v2")
	ready := filepath.Join(dir, "READY")
	ctx := context.Background()
	if _, err := os.Stat(ready); err != nil {
		os.RemoveAll(dir)
		start := time.Now()
		st, err := runs.Open(ctx, dir, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		if err := fillBench(ctx, st); err != nil {
			b.Fatal(err)
		}
		st.Close()
		os.WriteFile(ready, nil, 0o644)
		b.Logf("built the %d-result store in %s", benchSamples, time.Since(start).Round(time.Second))
	}
	st, err := runs.Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	c, err := st.Campaign(ctx, "bench-100k")
	if err != nil {
		b.Fatal(err)
	}
	return st, c.ID
}

func fillBench(ctx context.Context, st *runs.Store) error {
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: "bench-100k", Lane: "torch2cuda", Spec: []byte("lane: torch2cuda\n"), SpecDir: "/specs"})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	families := []string{"matmul", "conv", "norm", "reduction", "activation", "pooling", "loss", "elementwise", "fusion", "network"}
	const perTask = 5
	tasks := make([]runs.Task, 0, benchSamples)
	for i := range benchSamples / perTask {
		fam := families[i%len(families)]
		level := "level1"
		if fam == "fusion" || fam == "network" {
			level = "level2"
		}
		for k := range perTask {
			tasks = append(tasks, runs.Task{Key: fmt.Sprintf("r0/p%05d#%d", i, k), Lane: "torch2cuda", Categories: []string{fam, level},
				Files: map[string]string{"problem.py": problemText(i)}, Prompt: "Write ModelNew for:\n" + problemText(i)})
		}
	}
	for i := 0; i < len(tasks); i += 5000 {
		if _, err := st.AddTasks(ctx, c.ID, tasks[i:min(i+5000, len(tasks))]); err != nil {
			return err
		}
	}
	reasoning := strings.Repeat("Tile the loop so each block reuses the shared-memory tile; check the tail. ", 28)
	for n := range benchSamples {
		l, err := st.Claim(ctx, c.ID, "bench", time.Hour)
		if err != nil {
			return err
		}
		seed := n
		if n%10 == 9 {
			seed = n - 1 // a renamed copy of the previous answer
		}
		answer := benchKernel(seed, 30+seed%31)
		if n%10 == 9 {
			answer = strings.ReplaceAll(answer, "acc", "total") // renamed: the same normalised code
		}
		msgs := []agent.Message{
			{Role: agent.RoleSystem, Content: "You are an expert CUDA engineer. Answer with a ModelNew module."},
			{Role: agent.RoleUser, Content: l.Task.Prompt},
			{Role: agent.RoleAssistant, Reasoning: reasoning, Content: "```python\n" + answer + "```\n"},
		}
		tr, _ := json.Marshal(msgs)
		pass := rng.Float64() < 0.85
		v := runs.Verdict{Pass: pass, Stage: "time", Stages: []byte(`[{"name":"build","ok":true},{"name":"run","ok":true}]`),
			Measurements: map[string]float64{"speedup": 0.5 + 3*rng.Float64(), "correct": 1}, Toolchain: map[string]string{"torch": "2.9.0"}, Policy: "torch2cuda/v1"}
		if !pass {
			v.Class = "wrong_output"
		}
		a := runs.Attempt{Model: "qwen3-coder", Endpoint: "http://llm/v1", Answer: answer, Transcript: tr,
			Usage: runs.Usage{PromptTokens: 900, CompletionTokens: 1400, ReasoningTokens: 600 + rng.IntN(9000)}, StartedAt: time.Now(), FinishedAt: time.Now()}
		if err := st.Finish(ctx, l, a, v); err != nil {
			return err
		}
	}
	return nil
}

func problemText(i int) string {
	return fmt.Sprintf("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x * %d.0 + %d)\n"+
		"def get_inputs():\n    return [torch.randn(%d, 1024)]\ndef get_init_inputs():\n    return []\n", i%97+1, i%13, 64+i%512)
}

// benchKernel writes a CUDA kernel of n statements in a ModelNew module,
// each statement drawn by seed from a small grammar (operators, built-in
// calls, conditionals, loops), so that kernels of different seeds differ
// in structure, not only in their constants.
func benchKernel(seed, n int) string {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	ops := []string{"+", "-", "*", "/"}
	calls := []string{"expf", "fmaxf", "fminf", "sqrtf", "__expf", "tanhf", "rsqrtf", "fabsf"}
	term := func() string {
		switch rng.IntN(4) {
		case 0:
			return fmt.Sprintf("x[(i + %d) %% n]", rng.IntN(64))
		case 1:
			return fmt.Sprintf("%d.%df", rng.IntN(10), rng.IntN(10))
		case 2:
			return calls[rng.IntN(len(calls))] + "(acc)"
		default:
			return "s[threadIdx.x ^ " + fmt.Sprint(1<<rng.IntN(5)) + "]"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "import torch\nfrom torch.utils.cpp_extension import load_inline\nsrc = r'''\n__global__ void k%d(const float *x, float *y, int n) {\n  __shared__ float s[256];\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float acc = 0.0f;\n", seed)
	for range n {
		switch rng.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "  if (i %s %d < n) acc %s= %s;\n", ops[rng.IntN(2)], rng.IntN(32), ops[rng.IntN(4)], term())
		case 1:
			fmt.Fprintf(&b, "  for (int j = 0; j < %d; ++j) acc = acc %s %s;\n", 1+rng.IntN(8), ops[rng.IntN(4)], term())
		case 2:
			fmt.Fprintf(&b, "  s[threadIdx.x] = %s %s %s;\n  __syncthreads();\n", term(), ops[rng.IntN(4)], term())
		default:
			fmt.Fprintf(&b, "  acc = %s %s %s %s acc;\n", term(), ops[rng.IntN(4)], term(), ops[rng.IntN(4)])
		}
	}
	b.WriteString("  if (i < n) y[i] = acc;\n}\n'''\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return mod.run(x)\n")
	return b.String()
}

// BenchmarkExport100k exports the 100k-result campaign in the messages
// format to a folder, with deduplication, a 5% validation split and the
// concur policy. Run it with
//
//	go test ./runs/dataset -run '^$' -bench Export100k -benchtime 1x -timeout 60m
//
// (runs/dataset/EXPORT_BENCH.md records the figures).
func BenchmarkExport100k(b *testing.B) {
	st, id := benchStore(b)
	for _, tc := range []struct {
		name string
		mod  func(*Options)
	}{
		{"messages-dedup-all", func(o *Options) { o.Format = Messages }},
		{"messages-dedup-concur", func(o *Options) { o.Format, o.Selection.Policy = Messages, curate.Concur }},
		{"raw-dedup", func(o *Options) { o.Format = Raw }},
		{"messages-nodedup", func(o *Options) { o.Format, o.Dedup = Messages, false }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				opt := DefaultOptions()
				opt.Validation = 0.05
				tc.mod(&opt)
				dir := b.TempDir()
				start := time.Now()
				sum, err := Build(context.Background(), st, id, Output{Dir: dir}, opt)
				if err != nil {
					b.Fatal(err)
				}
				el := time.Since(start)
				b.ReportMetric(el.Seconds(), "s/export")
				b.ReportMetric(float64(sum.Results)/el.Seconds(), "results/s")
				b.Logf("%s: %d results, %d written (train %d, validation %d), left out %v, %.1f s", tc.name, sum.Results, sum.Written, sum.Train, sum.Validation, sum.Excluded, el.Seconds())
			}
		})
	}
}
