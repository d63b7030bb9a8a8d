package refinement

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// A synthesiser reply as a model might write it: analysis first, then
// blocks, some of them broken.
const c2x86Reply = "The failing functions all use switch statements with five or more cases; the model emits a jump table.\n\n" +
	"### TASK 1\ncategory: switch_many\nfunction: weekday_code\ndescription: maps 0-6 to letter codes with a 7-case switch\n" +
	"```c function.c\nint weekday_code(int d)\n{\n    switch (d) {\n    case 0: return 'S';\n    case 1: return 'M';\n    case 2: return 'T';\n    case 3: return 'W';\n    case 4: return 'R';\n    case 5: return 'F';\n    case 6: return 'A';\n    default: return '?';\n    }\n}\n```\n" +
	"```c driver.c\n#include <stdio.h>\nint weekday_code(int d);\nint main(void)\n{\n    for (int d = -1; d <= 7; d++)\n        printf(\"%d -> %c\\n\", d, weekday_code(d));\n    return 0;\n}\n```\n\n" +
	"### TASK 2\ncategory: switch_many\nfunction: dup_def\ndescription: driver defines the function\n" +
	"```c function.c\nint dup_def(int x) { switch (x) { case 1: return 1; default: return 0; } }\n```\n" +
	"```c driver.c\n#include <stdio.h>\nint dup_def(int x) { return x; }\nint main(void) { printf(\"%d\\n\", dup_def(1)); return 0; }\n```\n\n" +
	"### TASK 3\ncategory: switch_many\nfunction: lonely\n```c function.c\nint lonely(int x) { return x; }\n```\n\n" +
	"### TASK 4\ncategory: switch_many\nfunction: noisy\n" +
	"```c function.c\n#include <stdio.h>\nint noisy(int x) { printf(\"%d\", x); return x; }\n```\n" +
	"```c driver.c\nint noisy(int x);\nint main(void) { return noisy(0); }\n```\n\n" +
	"### TASK 5\n**Category:** switch_many\n**Function:** `sat_class(int v)`\n**Description:** classifies saturation levels\n" +
	"```c\nint sat_class(int v)\n{\n    switch (v / 10) {\n    case 0: return 0;\n    case 1: case 2: return 1;\n    case 3: case 4: case 5: return 2;\n    case 6: return 3;\n    default: return 4;\n    }\n}\n```\n" +
	"```c\n#include <stdio.h>\nint sat_class(int v);\nint main(void)\n{\n    int v[] = {0, 9, 10, 25, 31, 55, 60, 69, 70, 100};\n    for (int i = 0; i < 10; i++)\n        printf(\"%d: %d\\n\", v[i], sat_class(v[i]));\n    return 0;\n}\n```\n\n" +
	"### TASK 6\ncategory: switch_many\ndescription: no function line, one function to infer\n" +
	"```c function.c\nstatic int helper(int x) { return x * 2; }\nlong grade(long s)\n{\n    switch (s) { case 1: return helper(1); case 2: return 7; case 3: return 9; case 4: return 11; case 5: return 13; }\n    return -1;\n}\n```\n" +
	"```c driver.c\n#include <stdio.h>\nlong grade(long s);\nint main(void) { for (long s = 0; s < 7; s++) printf(\"%ld\\n\", grade(s)); return 0; }\n```\n\n" +
	"### TASK 7\ncategory: switch_many\nfunction: has_main\n" +
	"```c function.c\nint has_main(int x) { return x; }\nint main(void) { return 0; }\n```\n" +
	"```c driver.c\nint has_main(int x);\nint main(void) { return has_main(0); }\n```\n\n" +
	"### TASK 8\ncategory: switch_many\nfunction: local_inc\n" +
	"```c function.c\n#include \"tables.h\"\nint local_inc(int x) { return x; }\n```\n" +
	"```c driver.c\n#include <stdio.h>\nint local_inc(int x);\nint main(void) { printf(\"%d\\n\", local_inc(2)); return 0; }\n```\n\n" +
	"### TASK 9\ncategory: Switch Many\nfunction: bad_cat\n" +
	"```c function.c\nint bad_cat(int x) { return x; }\n```\n```c driver.c\nint bad_cat(int x);\nint main(void) { return bad_cat(0); }\n```\n\n" +
	"### TASK 10\ncategory: switch_many\nfunction: never_called\n" +
	"```c function.c\nint never_called(int x) { return x; }\n```\n```c driver.c\n#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); return 0; }\n```\n\n" +
	"### TASK 11\ncategory: switch_many\nfunction: cut_off\n```c function.c\nint cut_off(int x) {\n    switch (x) {\n"

func TestParseSynthesizedC2X86(t *testing.T) {
	t.Parallel()
	cands, errs := ParseSynthesized(LaneC2X86, c2x86Reply)
	var got []string
	for _, c := range cands {
		got = append(got, fmt.Sprintf("%d:%s", c.Index, c.Function))
		if c.Lane != LaneC2X86 || c.Category != "switch_many" || len(c.Hash) != 64 || len(c.Files) != 2 {
			t.Errorf("candidate %+v", c)
		}
		if !strings.HasSuffix(c.Files["function.c"], "}\n") || strings.Contains(c.Files["function.c"], "```") {
			t.Errorf("candidate %d function.c %q", c.Index, c.Files["function.c"])
		}
	}
	if want := []string{"1:weekday_code", "5:sat_class", "6:grade"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v; errors %v", got, want, errs)
	}
	if cands[1].Description != "classifies saturation levels" {
		t.Errorf("description %q", cands[1].Description)
	}
	wantErrs := map[int]string{
		2:  "driver.c defines dup_def itself",
		3:  "no driver.c code block",
		4:  "function.c calls printf",
		7:  "function.c defines main",
		8:  "local header",
		9:  `category "switch many" is not a label`,
		10: "driver.c never calls never_called",
		11: "not closed",
	}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors %v, want %d", errs, len(wantErrs))
	}
	for _, err := range errs {
		var be *BlockError
		if !errors.As(err, &be) || !errors.Is(err, ErrRejected) {
			t.Fatalf("error %v is not a *BlockError matching ErrRejected", err)
		}
		if !strings.Contains(be.Reason, wantErrs[be.Index]) {
			t.Errorf("block %d: reason %q, want %q", be.Index, be.Reason, wantErrs[be.Index])
		}
	}
	// A candidate becomes a task.
	task := cands[0].Task(2, "r2/synth-1", "switch_many", "switch")
	if task.Round != 2 || task.Key != "r2/synth-1" || task.Lane != LaneC2X86 || !slices.Equal(task.Categories, []string{"switch", "switch_many"}) ||
		task.Meta["function"] != "weekday_code" || task.Meta["origin"] != "resynthesis" || task.Meta["source_hash"] != cands[0].Hash ||
		task.Files["driver.c"] != cands[0].Files["driver.c"] {
		t.Errorf("task %+v", task)
	}
}

func TestParseSynthesizedEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, lane, reply string
		cands             int
		errs              []string
	}{
		{"no blocks", LaneC2X86, "Sorry, I cannot help with that.", 0, []string{"no \"### TASK n\" blocks"}},
		{"unknown lane", "sass2rdna", "### TASK 1\n```text\nsomething long enough to be a statement of a task\n```\n", 0, []string{"no synthesis format"}},
		{"cuda ok", LaneCUDASynth, "analysis\n### TASK 1\ncategory: atomics\ndescription: histogram\n```text\nWrite a CUDA program that builds a 256-bin histogram of 1<<20 bytes (byte i = (i*31+7)%256) with atomicAdd on shared-memory bins, then prints the counts of bins 0, 1 and 255.\n```\n```cuda reference.cu\n" + refHistogram + "```\n", 1, nil},
		{"cuda reference problems", LaneCUDASynth, "### TASK 1\n```text\n" + longStatement + "\n```\n" +
			"### TASK 2\n```text\n" + longStatement + "\n```\n```cuda\nint main() { return 0; }\n```\n" +
			"### TASK 3\n```text\n" + longStatement + "\n```\n```cuda\n__global__ void k(int *p) { *p = 1; }\nint main() { return 0; }\n```\n" +
			"### TASK 4\n```text\n" + longStatement + "\n```\n```cuda\n__global__ void k(int *p) { *p = 1; }\nvoid run(int *p) { k<<<1, 1>>>(p); }\n```\n" +
			"### TASK 5\n```text\n" + longStatement + "\n```\n```cu\n#include <cstdlib>\n__global__ void k(int *p) { *p = 1; }\nint main() { int n = atoi(getenv(\"N\")); k<<<1, n>>>(0); }\n```\n", 0,
			[]string{"task 1: no ```cuda block", "task 2: the reference program defines no __global__", "task 3: the reference program launches no kernel",
				"task 4: the reference program does not define main", "task 5: the reference program calls getenv"}},
		{"cuda short and missing", LaneCUDASynth, "### TASK 1\ncategory: atomics\n```text\nDo it.\n```\n### TASK 2\ncategory: atomics\n```cuda\n__global__ void k() {}\n```\n", 0,
			[]string{"at least 40", "no ```text block"}},
		{"repeated numbers renumbered", LaneCUDASynth, "### TASK 1\n```text\nshort\n```\n### TASK 1\n```text\nshort\n```\n", 0, []string{"task 1:", "task 2:"}},
		{"bold headers", LaneCUDASynth, "**TASK 1**\ncategory: streams\n```\nWrite a CUDA program that splits a 4M-element SAXPY over 4 streams and prints the sum of the result with 3 decimals.\n```\n```c++\n" + refHistogram + "```\n", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cands, errs := ParseSynthesized(tt.lane, tt.reply)
			if len(cands) != tt.cands || len(errs) != len(tt.errs) {
				t.Fatalf("%d candidates, errors %v; want %d and %v", len(cands), errs, tt.cands, tt.errs)
			}
			for i, w := range tt.errs {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %q lacks %q", errs[i], w)
				}
			}
			for _, c := range cands {
				if c.Prompt == "" || len(c.Files) != 1 || c.Files[ReferenceFile] != refHistogram || c.Category == "" || c.Hash != SourceHash(LaneCUDASynth, nil, c.Prompt) {
					t.Errorf("cuda candidate %+v", c)
				}
			}
		})
	}
}

// refHistogram is a small reference program of a synthesised cuda-synth task.
const refHistogram = `#include <cstdio>

__global__ void hist(const unsigned char *in, int n, unsigned int *bins)
{
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[in[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}

int main()
{
    const int n = 1 << 20;
    unsigned char *h = new unsigned char[n];
    for (int i = 0; i < n; i++) h[i] = (unsigned char)((i * 31 + 7) % 256);
    unsigned char *d;
    unsigned int *bins, out[256];
    cudaMalloc(&d, n);
    cudaMalloc(&bins, sizeof out);
    cudaMemset(bins, 0, sizeof out);
    cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
    hist<<<64, 256>>>(d, n, bins);
    cudaMemcpy(out, bins, sizeof out, cudaMemcpyDeviceToHost);
    printf("%u %u %u\n", out[0], out[1], out[255]);
    return 0;
}
`

const longStatement = "Write a CUDA program that sums 1<<20 integers (value i%7) with a shared-memory reduction and prints the sum."

func TestBuildSynthPrompt(t *testing.T) {
	t.Parallel()
	answer := "\t.text\n\t.globl f\nf:\n\tjmp *.L4(,%rax,8)\n# a stray ``` fence inside the answer\n"
	ex := Example{TaskKey: "r0/sw#0", Files: map[string]string{"function.c": srcSwitch, "driver.c": "int main(void) { return 0; }"},
		Answer: answer, Class: ClassWrongOutput, Label: "wrong.value", LabelDoc: "numbers differ", Diagnostic: diagNumeric}
	p, err := BuildSynthPrompt(SynthRequest{Lane: LaneC2X86, Category: "switch_many", Examples: []Example{ex},
		Avoid: []string{"popcount64", "f"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`category "switch_many": switch statements with 5 or more`,
		"Here is a failing example",
		"## Example 1 (failure: wrong.value, numbers differ)",
		"```c\n" + srcSwitch + "\n```",
		"````asm\n" + strings.TrimRight(answer, "\n") + "\n````",
		"```text\n" + diagNumeric + "\n```",
		"write 10 NEW test items",
		"### TASK 1\ncategory: switch_many\nfunction: <",
		"```c function.c",
		"```c driver.c",
		"up to ### TASK 10.",
		"Do not use these function names, they exist already: popcount64, f.",
	} {
		if !strings.Contains(p.User, w) {
			t.Errorf("user prompt lacks %q", w)
		}
	}
	if !strings.Contains(p.System, "C to x86-64 assembly") {
		t.Errorf("system prompt %q", p.System)
	}
	if strings.Contains(p.User, "<no value>") {
		t.Error("user prompt has <no value>")
	}

	// K, a feature category's description, two examples, no avoid list.
	p, err = BuildSynthPrompt(SynthRequest{Lane: LaneC2X86, Category: "goto", K: 3, Examples: []Example{ex, ex}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`category "goto": goto statements`, "Here are 2 failing examples", "## Example 2", "write 3 NEW", "up to ### TASK 3."} {
		if !strings.Contains(p.User, w) {
			t.Errorf("user prompt lacks %q", w)
		}
	}
	if strings.Contains(p.User, "Do not use these function names") {
		t.Error("avoid line without names")
	}

	// The prompt-only lane.
	p, err = BuildSynthPrompt(SynthRequest{Lane: LaneCUDASynth, Category: "atomics",
		Examples: []Example{{Prompt: "Write a histogram kernel.", Answer: "__global__ void h() {}", Label: "cuda.race", Diagnostic: "race reported"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"atomic operations", "```text\nWrite a histogram kernel.\n```", "```cuda\n__global__ void h() {}\n```", "### TASK 1\ncategory: atomics", "```text\n<the task statement>",
		"```cuda reference.cu\n<the complete reference program>\n```", "nvcc -gencode arch=compute_86"} {
		if !strings.Contains(p.User, w) {
			t.Errorf("cuda user prompt lacks %q", w)
		}
	}

	if _, err := BuildSynthPrompt(SynthRequest{Lane: "nope", Category: "x"}); !errors.Is(err, ErrNoSynthLane) {
		t.Errorf("unknown lane: %v", err)
	}
	if _, err := BuildSynthPrompt(SynthRequest{Lane: LaneC2X86}); err == nil {
		t.Error("no category: no error")
	}
}

// The prompt's format example parses as a reply (with the placeholders
// filled in), so the two stay in step.
func TestPromptFormatParses(t *testing.T) {
	t.Parallel()
	p, err := BuildSynthPrompt(SynthRequest{Lane: LaneC2X86, Category: "loop", K: 1})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(p.User, "### TASK 1")
	j := strings.Index(p.User, "### TASK 2")
	block := p.User[i:j]
	block = strings.Replace(block, "<the C name of the function under test>", "sum_to", 1)
	block = strings.Replace(block, "<the complete function.c>", "int sum_to(int n) { int s = 0; for (int i = 1; i <= n; i++) s += i; return s; }", 1)
	block = strings.Replace(block, "<the complete driver.c>", "#include <stdio.h>\nint sum_to(int n);\nint main(void) { printf(\"%d\\n\", sum_to(4)); return 0; }", 1)
	cands, errs := ParseSynthesized(LaneC2X86, block)
	if len(cands) != 1 || len(errs) != 0 || cands[0].Function != "sum_to" || cands[0].Category != "loop" {
		t.Fatalf("candidates %+v, errors %v\nblock:\n%s", cands, errs, block)
	}
}

func TestExamplesFor(t *testing.T) {
	t.Parallel()
	results := synthCampaign()
	// A model error in the category: never an example.
	me := synthResult(0, 99, srcSwitch, false, ClassModelError, "gave up", "switch_many")
	results = append(results, me)
	// Every switch_many task has the same source: item07 (asm.mnemonic,
	// with another answer) is shown after item06 and item02 (the first of
	// each label); item08, the same as item06 in all, is not.
	for i := range results {
		if results[i].Task.Key == "r0/item07" {
			results[i].Attempt.Answer = "\t.globl f\nf:\n\tmulsss %xmm1, %xmm0\n\tret\n"
		}
	}
	ex := ExamplesFor(results, "switch_many", ExampleOptions{Max: 4})
	if len(ex) != 3 {
		t.Fatalf("%d examples", len(ex))
	}
	// Round robin over labels sorted: asm.mnemonic, wrong.numeric, then
	// asm.mnemonic again.
	var labels []string
	for _, e := range ex {
		labels = append(labels, e.Label)
		if e.Files["function.c"] != srcSwitch || e.Answer == "" || e.Diagnostic == "" || e.LabelDoc == "" || e.Prompt != "" {
			t.Errorf("example %+v", e)
		}
	}
	if !slices.Equal(labels, []string{"asm.mnemonic", "wrong.numeric", "asm.mnemonic"}) {
		t.Errorf("labels %v", labels)
	}
	if ex[0].TaskKey != "r0/item06" || ex[1].TaskKey != "r0/item02" || ex[2].TaskKey != "r0/item07" {
		t.Errorf("keys %s, %s, %s", ex[0].TaskKey, ex[1].TaskKey, ex[2].TaskKey)
	}
	// Distinct tasks first: one example per source before any repeat.
	loop := synthResult(0, 98, srcLoop, false, ClassWrongOutput, diagNumeric, "switch_many")
	ex = ExamplesFor(append(results, loop), "switch_many", ExampleOptions{Max: 2})
	if len(ex) != 2 || ex[0].TaskKey != "r0/item06" || ex[1].TaskKey != loop.Task.Key {
		t.Errorf("distinct tasks first: %+v", ex)
	}
	// A feature category: the for-loop tasks (one fails).
	ex = ExamplesFor(results, "loop_for", ExampleOptions{})
	if len(ex) != 1 || ex[0].Label != "crash.segv" {
		t.Fatalf("loop_for examples %+v", ex)
	}
	// Shortening.
	long := synthResult(0, 100, srcLoop, false, ClassWrongOutput, strings.Repeat("x", 5000), "long")
	long.Attempt.Answer = strings.Repeat("movl %eax, %ebx\n", 1000)
	ex = ExamplesFor([]runs.Result{long}, "long", ExampleOptions{MaxAnswerChars: 100, MaxDiagnosticChars: 50})
	if len(ex) != 1 || len(ex[0].Answer) > 140 || !strings.Contains(ex[0].Answer, "more characters)") || len(ex[0].Diagnostic) > 90 {
		t.Fatalf("shortened %q / %q", ex[0].Answer, ex[0].Diagnostic)
	}
	if got := ExamplesFor(results, "no_such_category", ExampleOptions{}); got != nil {
		t.Errorf("examples of an unknown category: %v", got)
	}
}

func TestExistingFunctions(t *testing.T) {
	t.Parallel()
	tasks := []runs.Task{{Meta: map[string]string{"function": "b"}}, {Meta: map[string]string{"function": "a"}}, {Meta: map[string]string{"function": "b"}}, {}}
	if got := ExistingFunctions(tasks, 0); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("got %v", got)
	}
	if got := ExistingFunctions(tasks, 1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("limit: got %v", got)
	}
}

func TestScreen(t *testing.T) {
	t.Parallel()
	cands, _ := ParseSynthesized(LaneC2X86, c2x86Reply)
	// A layout variant of candidate 1 (same function, new comments and
	// spacing, another driver) and an existing task equal to candidate 5.
	variant := cands[0]
	variant.Index = 12
	variant.Files = map[string]string{"function.c": "/* weekdays */\nint weekday_code(int d) {\n  switch (d) { case 0: return 'S'; case 1: return 'M'; case 2: return 'T';\n case 3: return 'W'; case 4: return 'R'; case 5: return 'F'; case 6: return 'A'; default: return '?'; }\n}\n",
		"driver.c": "int weekday_code(int);\nint main(void) { return weekday_code(1) != 'M'; }\n"}
	variant.Hash = ""
	existing := []runs.Task{{Key: "r0/sat", Lane: LaneC2X86, Files: map[string]string{"function.c": "// old\n" + cands[1].Files["function.c"]}}}
	all := append(slices.Clone(cands), variant)

	var mu sync.Mutex
	var validated []int
	v := ValidatorFunc(func(ctx context.Context, c Candidate) error {
		mu.Lock()
		validated = append(validated, c.Index)
		mu.Unlock()
		if c.Function == "grade" {
			return errors.New("driver.c:3: error: conflicting types for 'grade'")
		}
		return nil
	})
	acc, rej, err := Screen(context.Background(), all, ScreenOptions{Existing: existing, Validator: v, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(acc) != 1 || acc[0].Function != "weekday_code" {
		t.Fatalf("accepted %+v", acc)
	}
	why := map[int]error{}
	for _, r := range rej {
		why[r.Candidate.Index] = r.Err
	}
	if !errors.Is(why[5], ErrDuplicate) || !strings.Contains(why[5].Error(), "existing task r0/sat") {
		t.Errorf("candidate 5: %v", why[5])
	}
	if !errors.Is(why[12], ErrDuplicate) || !strings.Contains(why[12].Error(), "candidate 1") {
		t.Errorf("variant: %v", why[12])
	}
	if !errors.Is(why[6], ErrInvalid) || !strings.Contains(why[6].Error(), "conflicting types") {
		t.Errorf("candidate 6: %v", why[6])
	}
	slices.Sort(validated)
	if !slices.Equal(validated, []int{1, 6}) {
		t.Errorf("validated %v: duplicates must not be validated", validated)
	}
}

func TestScreenConcurrencyAndCancel(t *testing.T) {
	t.Parallel()
	var cands []Candidate
	for i := range 12 {
		cands = append(cands, Candidate{Lane: LaneCUDASynth, Index: i + 1, Prompt: fmt.Sprintf("task statement number %d, long enough", i)})
	}
	var cur, peak atomic.Int32
	v := ValidatorFunc(func(ctx context.Context, c Candidate) error {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		return nil
	})
	acc, rej, err := Screen(context.Background(), cands, ScreenOptions{Validator: v, Parallel: 3})
	if err != nil || len(acc) != 12 || len(rej) != 0 {
		t.Fatalf("accepted %d, rejected %d, err %v", len(acc), len(rej), err)
	}
	for i, c := range acc {
		if c.Index != i+1 {
			t.Fatalf("order: %d at %d", c.Index, i)
		}
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want 2..3", p)
	}

	ctx, cancel := context.WithCancel(context.Background())
	block := ValidatorFunc(func(ctx context.Context, c Candidate) error {
		if c.Index == 2 {
			cancel()
		}
		<-ctx.Done()
		return ctx.Err()
	})
	acc, rej, err = Screen(ctx, cands, ScreenOptions{Validator: block, Parallel: 2})
	if !errors.Is(err, context.Canceled) || len(acc) != 0 || len(rej) != 12 {
		t.Fatalf("cancelled: accepted %d, rejected %d, err %v", len(acc), len(rej), err)
	}
	for _, r := range rej {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("candidate %d: %v", r.Candidate.Index, r.Err)
		}
	}
}

// gccValidator is a small real validator: both files compile, link and
// run with gcc. (The engine's validator does this in a sandbox and also
// checks determinism.)
type gccValidator struct{ dir string }

func (g gccValidator) Validate(ctx context.Context, c Candidate) error {
	dir, err := os.MkdirTemp(g.dir, "cand")
	if err != nil {
		return err
	}
	for name, src := range c.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			return err
		}
	}
	out, err := exec.CommandContext(ctx, "gcc", "-O0", "-Wall", "-Werror=implicit-function-declaration", "-o", filepath.Join(dir, "prog"),
		filepath.Join(dir, "function.c"), filepath.Join(dir, "driver.c"), "-lm").CombinedOutput()
	if err != nil {
		return fmt.Errorf("build: %v: %s", err, out)
	}
	if out, err := exec.CommandContext(ctx, filepath.Join(dir, "prog")).CombinedOutput(); err != nil {
		return fmt.Errorf("run: %v: %s", err, out)
	}
	return nil
}

func TestScreenWithGCC(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	cands, _ := ParseSynthesized(LaneC2X86, c2x86Reply)
	broken := cands[0]
	broken.Index = 20
	broken.Function = "broken"
	broken.Files = map[string]string{"function.c": "int broken(int x) { return x +; }\n", "driver.c": "int broken(int);\nint main(void) { return broken(0); }\n"}
	broken.Hash = ""
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acc, rej, err := Screen(ctx, append(cands, broken), ScreenOptions{Validator: gccValidator{t.TempDir()}, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(acc) != 3 || len(rej) != 1 || rej[0].Candidate.Index != 20 || !errors.Is(rej[0].Err, ErrInvalid) ||
		!strings.Contains(rej[0].Err.Error(), "expected expression") {
		t.Fatalf("accepted %d, rejected %+v", len(acc), rej)
	}
}

func TestSourceHash(t *testing.T) {
	t.Parallel()
	a := SourceHash(LaneC2X86, map[string]string{"function.c": "int f(void){return 1;}", "driver.c": "x"}, "")
	b := SourceHash(LaneC2X86, map[string]string{"function.c": "int f(void) {\n  return 1; // one\n}\n", "driver.c": "y"}, "")
	c := SourceHash(LaneC2X86, map[string]string{"function.c": "int f(void){return 2;}"}, "")
	d := SourceHash(LaneCUDASynth, map[string]string{"function.c": "int f(void){return 1;}"}, "")
	e := SourceHash(LaneCUDASynth, nil, "Write  a Kernel")
	f := SourceHash(LaneCUDASynth, nil, "write a kernel\n")
	if a != b || a == c || a == d || e != f || len(a) != 64 {
		t.Fatalf("hashes %s %s %s %s %s %s", a, b, c, d, e, f)
	}
	// cuda-synth: the statement is the task; its reference program and a
	// corpus prompt's "(task id)" tag do not count.
	g := SourceHash(LaneCUDASynth, map[string]string{ReferenceFile: refHistogram}, "Write a kernel")
	h := SourceHash(LaneCUDASynth, nil, "Write a kernel\n\n(task basic_01_reduce)")
	i := SourceHash(LaneCUDASynth, nil, "Write a kernel (task one)?")
	if g != e || h != e || i == e {
		t.Fatalf("cuda-synth hashes %s %s %s vs %s", g, h, i, e)
	}
	if TaskHash(runs.Task{Lane: LaneC2X86, Files: map[string]string{"function.c": "int f(void){return 1;}"}}) != a {
		t.Fatal("TaskHash differs from SourceHash")
	}
	if TaskHash(runs.Task{Lane: LaneC2X86, Files: map[string]string{"function.c": "int f(void){return 1;}"}, Prompt: "Translate f"}) != a {
		t.Fatal("a c2x86 task's rendered prompt changes its hash")
	}
}
