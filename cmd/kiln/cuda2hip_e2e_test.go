package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// TestCUDA2HIPCampaign runs two cuda2hip campaigns on this CPU host over a
// folder corpus of cuda-synth programs, and checks the failure classes in
// the store:
//
//   - a script model answering one task each with a right translation, a
//     translation printing an extra line (-tags long; its CPU stages pass:
//     a wrong output is only seen on a GPU, so it is pending), one with a kernel
//     renamed (hip_compile_error at rdna3), one that does not compile
//     (hip_compile_error), a cheat that includes cuda_runtime.h and calls
//     the CUDA runtime (cuda_in_hip at hip-check, before any compile, and
//     suspected in its labels), and a refusal in prose (no_answer);
//   - the rule-based baseline (kind: hipify) over one translatable
//     program (two under -tags long; pending passes, with zero tokens)
//     and one with inline PTX,
//     which it refuses in a sentence (no_answer).
//
// The pending runs keep what a GPU host needs; `kiln rescore --pending`
// says here that there is no GPU and changes nothing.
func TestCUDA2HIPCampaign(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds CUDA and HIP programs")
	}
	src, err := filepath.Abs("../../tools/cudasynth/corpus")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// corpus copies cuda-synth corpus items into a folder corpus.
	corpus := func(name string, ids ...string) (string, map[string]string) {
		root := filepath.Join(dir, name)
		progs := map[string]string{}
		for _, id := range ids {
			if err := os.MkdirAll(filepath.Join(root, id), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"program.cu", "meta.json"} {
				b, err := os.ReadFile(filepath.Join(src, id, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, id, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
				if f == "program.cu" {
					progs[id] = string(b)
				}
			}
		}
		return root, progs
	}
	translate := func(prog string) string {
		r, err := hipify.Translate(prog)
		if err != nil || !r.OK() {
			t.Fatalf("hipify: %v %v", err, r.Unsupported)
		}
		return r.HIP
	}
	mustReplace := func(s, old, new string) string {
		out := strings.Replace(s, old, new, 1)
		if out == s {
			t.Fatalf("%q not found", old)
		}
		return out
	}

	const (
		right    = "basic_01_reduce_sum_shfl"
		extra    = "sparse_01_spmv_csr_warp"
		renamed  = "sparse_04_tensor_coo_ttv"
		broken   = "sparse_02_spmm_ell"
		cheat    = "basic_02_stencil1d_radius5"
		refusal  = "sparse_03_conv_coo_scatter"
		ptxAsm   = "crypto_03_mining_ptx_rotate"
		campaign = "c2h-script"
		baseline = "c2h-hipify"
	)
	// The default tier leaves out the two programs whose verdicts repeat
	// right's on a CPU host (every CPU stage passes, the run is pending):
	// the translation with an extra line of output (only a GPU run tells
	// it from right; tools/cuda2hip TestPeers checks such output-only
	// twins pending on a CPU host under -tags long, failed on a GPU host)
	// and the baseline's second translatable program. 5 and 3 of the
	// test's 23 nvcc/hipcc builds; -tags long runs both.
	scriptIDs, baseIDs := []string{right, renamed, broken, cheat, refusal}, []string{right, ptxAsm}
	if longTier {
		scriptIDs, baseIDs = append(scriptIDs, extra), append(baseIDs, broken)
	}
	scriptCorpus, progs := corpus("script-corpus", scriptIDs...)
	kernel := regexp.MustCompile(`__global__\s+void\s+(\w+)`).FindStringSubmatch(progs[renamed])[1]
	answers := map[string]string{
		right:   translate(progs[right]),
		renamed: strings.ReplaceAll(translate(progs[renamed]), kernel, kernel+"_v2"),
		broken:  mustReplace(translate(progs[broken]), "hipMalloc(", "hipMalloc(("),
		cheat:   "#include <cuda_runtime.h>\n" + strings.ReplaceAll(translate(progs[cheat]), "hipMalloc(", "cudaMalloc("),
	}
	if longTier {
		// An extra line of output: only a GPU run can tell.
		answers[extra] = mustReplace(translate(progs[extra]), "int main(", "static int extra_line = printf(\"checksum 41\\n\");\nint main(")
	}
	var script strings.Builder
	for id, a := range answers {
		line, _ := json.Marshal(map[string]string{"match": regexp.QuoteMeta("(task " + id + ")"),
			"response": "Here is the HIP program.\n\n```hip\n" + a + "```\n"})
		script.Write(line)
		script.WriteByte('\n')
	}
	line, _ := json.Marshal(map[string]string{"match": regexp.QuoteMeta("(task " + refusal + ")"),
		"response": "I cannot translate this program, sorry."})
	script.Write(line)
	script.WriteByte('\n')
	scriptPath := filepath.Join(dir, "answers.jsonl")
	if err := os.WriteFile(scriptPath, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	baseCorpus, _ := corpus("baseline-corpus", baseIDs...)

	spec := func(name, corpus, models string) string {
		p := filepath.Join(dir, name+".yaml")
		s := fmt.Sprintf("name: %s\nlane: cuda2hip\ntasks: {corpus: %s}\nmodels:\n%s\nconcurrency: 2\nagent: {repair_turns: 0, max_tool_calls: 0}\n",
			name, corpus, models)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for _, sp := range []string{
		spec(campaign, scriptCorpus, "  - {name: replay, kind: script, script: "+scriptPath+"}"),
		spec(baseline, baseCorpus, "  - {name: baseline, kind: hipify}"),
	} {
		code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", sp)
		if code != 0 {
			t.Fatalf("kiln run %s: exit %d\n%s\n%.3000s", sp, code, out, errs)
		}
	}

	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type want struct {
		pass, pending bool
		class, stage  string
		label         string // the stored fine label ("" : not checked)
		suspect       bool
	}
	check := func(name string, wants map[string]want) []runs.Result {
		c, err := st.Campaign(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := st.Results(ctx, c.ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(wants) {
			t.Fatalf("%s: %d results, want %d", name, len(res), len(wants))
		}
		for _, r := range res {
			id := r.Task.Meta["item"]
			w, ok := wants[id]
			if !ok {
				t.Errorf("%s: unexpected task %s", name, id)
				continue
			}
			v := r.Verdict
			if v.Pass != w.pass || v.Pending() != w.pending || v.Class != w.class || v.Stage != w.stage {
				t.Errorf("%s %s: pass %v pending %v class %q stage %q; want %+v\n%.600s", name, id, v.Pass, v.Pending(), v.Class, v.Stage, w, v.Diagnostic)
			}
			if v.Labels == nil {
				t.Errorf("%s %s: no stored labels", name, id)
				continue
			}
			if w.label != "" && v.Labels.DiagnosticKind != w.label {
				t.Errorf("%s %s: label %q, want %q (%s)", name, id, v.Labels.DiagnosticKind, w.label, v.Labels.Evidence)
			}
			if (v.Labels.Suspicion != "") != w.suspect {
				t.Errorf("%s %s: suspicion %q, want suspect %v", name, id, v.Labels.Suspicion, w.suspect)
			}
		}
		return res
	}
	pending := want{pass: true, pending: true, stage: "run", label: refinement.LabelPass}
	// A cheat's stored label is its fine label; its suspicion makes
	// refinement count it as suspected_cheating.
	scriptWants := map[string]want{
		right:   pending,
		renamed: {class: "hip_compile_error", stage: "rdna3", label: "hip.missing_kernel"},
		broken:  {class: "hip_compile_error", stage: "hip-compile-amd"},
		cheat:   {class: "cuda_in_hip", stage: "hip-check", label: "cuda_in_hip.header", suspect: true},
		refusal: {class: "no_answer", stage: "extract"},
	}
	baseWants := map[string]want{
		right:  pending,
		ptxAsm: {class: "no_answer", stage: "extract"},
	}
	if longTier {
		scriptWants[extra], baseWants[broken] = pending, pending
	}
	scripted := check(campaign, scriptWants)
	base := check(baseline, baseWants)

	blob := func(r runs.Result, name string) string {
		h, ok := r.Verdict.Artifacts[name]
		if !ok {
			t.Errorf("%s: no %s artifact", r.Task.Meta["item"], name)
			return ""
		}
		b, err := st.Blobs().Get(h)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, r := range append(scripted, base...) {
		id := r.Task.Meta["item"]
		t.Logf("%s: pass %v class %q stage %q; %v compiles (%v cached), verify %.0f ms", id, r.Verdict.Pass, r.Verdict.Class,
			r.Verdict.Stage, r.Verdict.Measurements["compiles"], r.Verdict.Measurements["compiles_cached"], r.Verdict.Measurements["verify_ms"])
		var stages []tools.Stage
		if err := json.Unmarshal(r.Verdict.Stages, &stages); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Verdict.Pending():
			// The record of a pending translation: the answer as HIP source,
			// the RDNA3 build, and what the GPU host needs.
			if s := stages[0]; s.Name != "hip-check" || !s.OK {
				t.Errorf("%s: first stage %+v", id, s)
			}
			if got := blob(r, "hip_source"); got != r.Attempt.Answer {
				t.Errorf("%s: hip_source is not the answer", id)
			}
			if !strings.Contains(blob(r, "rdna3"), "gfx1100") {
				t.Errorf("%s: no gfx1100 RDNA3 text", id)
			}
			for _, name := range []string{"cuda_binary", "hip_nvidia_binary", "gpu_probe_binary"} {
				if b := blob(r, name); !strings.HasPrefix(b, "\x7fELF") {
					t.Errorf("%s: %s is not an executable (%d bytes)", id, name, len(b))
				}
			}
		case r.Verdict.Class == "cuda_in_hip":
			if len(stages) != 1 || !strings.Contains(r.Verdict.Diagnostic, "cuda_runtime.h") ||
				!strings.Contains(r.Verdict.Diagnostic, "cudaMalloc") {
				t.Errorf("%s: the cheat's verdict: %d stages, %s", id, len(stages), r.Verdict.Diagnostic)
			}
		}
	}
	for _, r := range base {
		u := r.Attempt.Usage
		if u.PromptTokens+u.CompletionTokens+u.ReasoningTokens != 0 || r.Attempt.Endpoint != "baseline" {
			t.Errorf("baseline %s: endpoint %q usage %+v", r.Task.Meta["item"], r.Attempt.Endpoint, u)
		}
		if r.Task.Meta["item"] == ptxAsm && !strings.Contains(string(r.Attempt.Transcript), "cannot translate") {
			t.Errorf("the baseline's refusal is not in its transcript")
		}
	}

	// Completing the pending runs needs a GPU: here it is an error that says
	// so, and no verdict changes.
	code, out, errs := runKiln(t, ctx, "rescore", "--pending", "--data", data, campaign)
	if code == 0 || !strings.Contains(errs, "no NVIDIA GPU") {
		t.Errorf("rescore --pending without a GPU: exit %d\n%s\n%s", code, out, errs)
	}
}
