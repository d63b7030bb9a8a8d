package sass2rdna

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// exampleItem is the worked example's task as the engine verifies it.
func exampleItem(t *testing.T) (tools.Item, runs.Task) {
	t.Helper()
	ex, err := example()
	if err != nil {
		t.Fatal(err)
	}
	set, err := source(ex.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range set.Round0 {
		if task.Key == ex.TaskKey {
			return tools.Item{Lane: task.Lane, Files: task.Files, Meta: task.Meta}, task
		}
	}
	t.Fatalf("no task %s", ex.TaskKey)
	return tools.Item{}, runs.Task{}
}

// TestVerifyStages: the right answer passes every CPU stage and leaves
// amd-run pending with the programs an AMD host needs; broken answers
// fail at the stage and with the class and fine label expected.
func TestVerifyStages(t *testing.T) {
	t.Parallel()
	l := testLane(t)
	item, task := exampleItem(t)
	right, err := BuiltinAnswer(exampleID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v, err := l.Verify(ctx, item, right)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || v.Class != "" {
		t.Fatalf("right answer: %s at %s: %s", v.Class, v.Stage, v.Diagnostic)
	}
	var names []string
	for _, s := range v.Stages {
		t.Logf("%-10s ok=%v skipped=%v %s", s.Name, s.OK, s.Skipped, s.Detail)
		names = append(names, s.Name)
		if s.Name == StageAMDRun {
			if !s.Skipped || s.OK || !strings.Contains(s.Detail, "rescore --pending") {
				t.Errorf("amd-run on a CPU host: %+v", s)
			}
		} else if !s.OK {
			t.Errorf("stage %s: %+v", s.Name, s)
		}
	}
	if strings.Join(names, ",") != strings.Join(stageOrder, ",") {
		t.Errorf("stages %v", names)
	}
	if sim := v.Measurements["opcode_similarity"]; sim < 0.999 {
		t.Errorf("hipcc's own assembly has opcode similarity %.3f with itself", sim)
	}
	co := v.Artifacts[ArtifactCodeObject]
	prog := v.Artifacts[ArtifactAMDProgram]
	if !bytes.HasPrefix(co, []byte("\x7fELF")) || !bytes.HasPrefix(prog, []byte("\x7fELF")) || !bytes.HasPrefix(v.Artifacts[ArtifactAMDReference], []byte("\x7fELF")) {
		t.Fatalf("artifacts: code object %d bytes, programs %d and %d bytes", len(co), len(prog), len(v.Artifacts[ArtifactAMDReference]))
	}
	if !bytes.Contains(prog, co) {
		t.Error("the AMD program does not embed the answer's code object")
	}

	// Complete cannot run here: no AMD GPU.
	l2 := *l
	l2.cfg.KFD = filepath.Join(t.TempDir(), "kfd")
	if _, err := l2.Complete(ctx, item, v); !errors.Is(err, ErrNoAMDGPU) || !strings.Contains(err.Error(), "kfd") {
		t.Errorf("complete without an AMD GPU: %v", err)
	}

	lanes, err := refinement.NewLanes(mustRules(t))
	if err != nil {
		t.Fatal(err)
	}
	noMeta := right[:strings.Index(right, ".amdgpu_metadata")]
	for _, tc := range []struct {
		name, answer string
		stage        string
		class        tools.FailureClass
		label        string
		diag         string
	}{
		{"blank", "  \n", StageExtract, tools.ClassNoAnswer, "", "no RDNA3"},
		{"no target", strings.Replace(right, ".amdgcn_target", "; .amdgcn_target", 1), StageCheck, ClassDescriptor, "desc.target", "amdgcn_target"},
		{"gfx1030", strings.Replace(right, "--gfx1100", "--gfx1030", 1), StageCheck, ClassDescriptor, "desc.target", "gfx1030"},
		{"no descriptor", mustNoDescriptor(t, right), StageCheck, ClassDescriptor, "desc.missing_descriptor", "no kernel descriptor"},
		{"renamed kernel", strings.ReplaceAll(right, "_Z11jacobiSweepPKfPfS0_", "jacobi"), StageCheck, ClassDescriptor, "desc.missing_kernel", "no code label"},
		{"data in code", strings.Replace(right, "s_endpgm\n", ".long 0xbfb00000\n", 1), StageCheck, ClassEmbeddedCode, "embed.data_in_code", "data directive"},
		{"incbin", right + "\n\t.section .rodata\n\t.incbin \"/etc/passwd\"\n", StageCheck, ClassEmbeddedCode, "embed.file_read", "read files"},
		{"mnemonic", strings.Replace(right, "s_endpgm", "EXIT\n\ts_endpgm", 1), StageAssemble, tools.ClassAssembleError, "asm.mnemonic", "invalid instruction"},
		{"mad overlap", strings.Replace(right, "s_endpgm", "v_mad_u64_u32 v[1:2], null, s0, s15, v[0:1]\n\ts_endpgm", 1),
			StageAssemble, tools.ClassAssembleError, "asm.mad64_overlap", "free VGPR pair"},
		{"undefined symbol", strings.Replace(right, "s_endpgm", "s_getpc_b64 s[0:1]\n\ts_add_u32 s0, s0, nowhere@rel32@lo+4\n\ts_endpgm", 1),
			StageLink, tools.ClassLinkError, "link.undefined", "undefined symbol"},
		{"no metadata", noMeta, StageSymbols, ClassDescriptor, "desc.metadata", "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := l.Verify(ctx, item, tc.answer)
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass || v.Stage != tc.stage || v.Class != tc.class || !strings.Contains(v.Diagnostic, tc.diag) {
				t.Fatalf("pass %v, %s at %s: %s", v.Pass, v.Class, v.Stage, v.Diagnostic)
			}
			if tc.label == "" {
				return
			}
			res := runs.Result{Task: task, Attempt: runs.Attempt{Answer: tc.answer},
				Verdict: runs.Verdict{Class: string(v.Class), Stage: v.Stage, Diagnostic: v.Diagnostic}}
			if got := lanes.Labeler().Labels(res, "").DiagnosticKind; got != tc.label {
				t.Errorf("label %s, want %s (diagnostic %q)", got, tc.label, v.Diagnostic)
			}
		})
	}
}

func mustRules(t *testing.T) refinement.LaneRules {
	t.Helper()
	r, err := RefinementRules()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustNoDescriptor(t *testing.T, asm string) string {
	t.Helper()
	out, err := WithoutDescriptor(asm)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLegaliseMad64: hipcc's overlapping v_mad_u64_u32 moves to a free
// pair; descriptor and metadata grow; llvm-mc accepts the result.
func TestLegaliseMad64(t *testing.T) {
	t.Parallel()
	src := `	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.text
	.globl	k
	.p2align	8
	.type	k,@function
k:
	v_mad_u64_u32 v[1:2], null, s0, s15, v[0:1]
	v_mad_u64_u32 v[3:4], null, s0, s15, v[0:1] ; no overlap
	s_endpgm
	.section	.rodata,#alloc
	.p2align	6
	.amdhsa_kernel k
		.amdhsa_next_free_vgpr 5
		.amdhsa_next_free_sgpr 16
	.end_amdhsa_kernel
	.text
	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .name: x
        .vgpr_count: 99
    .name:           k
    .vgpr_count:     5
amdhsa.version:
  - 1
  - 1
...
	.end_amdgpu_metadata
`
	out, n, err := LegaliseMad64(src)
	if err != nil || n != 1 {
		t.Fatalf("%d rewritten, %v", n, err)
	}
	for _, want := range []string{"v_mad_u64_u32 v[5:6], null, s0, s15, v[0:1]\n\tv_mov_b32_e32 v1, v5\n\tv_mov_b32_e32 v2, v6\n",
		"v_mad_u64_u32 v[3:4], null, s0, s15, v[0:1] ; no overlap", ".amdhsa_next_free_vgpr 7", "    .vgpr_count:     7", "        .vgpr_count: 99"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if len(scanAsm(out).madOverlaps) != 0 {
		t.Error("overlap left")
	}
	if _, n, _ := LegaliseMad64(out); n != 0 {
		t.Error("not idempotent")
	}
	if _, _, err := LegaliseMad64(strings.Replace(src, "next_free_vgpr 5", "next_free_vgpr 255", 1)); err == nil {
		t.Error("no error when the VGPRs run out")
	}
}

// TestScanAsm: sections, labels, data in code and LLVM's own padding.
func TestScanAsm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, asm string
		embedded  string // "" when not suspect
	}{
		{"code", ".text\nk:\n  s_endpgm\n", ""},
		{"llvm padding", ".text\nk:\n  s_endpgm\n  .p2alignl 7, 3214868480\n  .fill 96, 4, 3214868480\n", ""},
		{"data in rodata", ".text\nk:\n s_endpgm\n.section .rodata\nt:\n .long 1, 2, 3\n", ""},
		{"long in text", ".text\nk:\n .long 0xbfb00000\n", "data directive"},
		{"byte in text section", ".section .text.k,\"ax\"\nk:\n s_nop 0\n .byte 1\n", "data directive"},
		{"byte after previous", ".section .rodata\n.text\n.previous\n.byte 1\n.previous\nk:\n .quad 7\n", "data directive"},
		{"fill other", ".text\nk:\n s_endpgm\n .fill 4, 4, 0xbfb00000\n", "data directive"},
		{"kernel in rodata", ".text\nk:\n s_endpgm\n.section .rodata\ncode:\n .long 0x7e000280, 0xbfb00000\n", "s_endpgm encoding"},
		{"kernel bytes in data", ".data\ncode:\n .byte 0x80, 0x02, 0x00, 0x7e, 0, 0, 0xb0, 0xbf\n.text\nk:\n s_endpgm\n", "s_endpgm encoding"},
		{"quad in data", ".data\n .quad 0xbfb000007e000280\n.text\nk:\n s_endpgm\n", "s_endpgm encoding"},
		{"table in rodata", ".section .rodata\nt:\n .long 1, -2, 0xbfb00001\n .byte 0, 0, 0xb0\n.text\nk:\n s_endpgm\n", ""},
		{"incbin", ".section .rodata\n.incbin \"x\"\n.text\nk:\n s_endpgm\n", "read files"},
		{"macro", ".macro m a\n .\\a \"x\"\n.endm\n.text\nk:\n s_endpgm\n", "macro"},
		{"comments", ".text\nk: ; .long 1\n s_endpgm // .byte 2\n /* .quad 3 */\n", ""},
	} {
		got := scanAsm(tc.asm).embedded()
		if (tc.embedded == "") != (got == "") || (tc.embedded != "" && !strings.Contains(got, tc.embedded)) {
			t.Errorf("%s: embedded() = %q, want %q", tc.name, got, tc.embedded)
		}
	}
	info := scanAsm(".text\nk:\n v_add_f32 v0, v1, v2\n v_dual_mov_b32 v1, 0 :: v_dual_mov_b32 v2, 1\n s_endpgm\n")
	if info.instructions() != 4 || info.mnemonics["v_dual_mov_b32"] != 2 || info.funcs["k"].instructions != 3 {
		t.Errorf("mnemonics %v funcs %+v", info.mnemonics, info.funcs["k"])
	}
	if s := OpcodeSimilarity(".text\nk:\n s_nop 0\n", ".text\nk:\n s_nop 0\n s_nop 1\n"); s < 0.999 {
		t.Errorf("similarity of the same mix %.3f", s)
	}
	if s := OpcodeSimilarity(".text\nk:\n s_nop 0\n", ".text\nk:\n s_endpgm\n"); s != 0 {
		t.Errorf("similarity of disjoint mixes %.3f", s)
	}
}

// TestExtract: the first assembly block, else an untagged one.
func TestExtract(t *testing.T) {
	t.Parallel()
	for reply, want := range map[string]string{
		"x\n```cuda\nint a;\n```\n```asm\ns_endpgm\n```\n": "s_endpgm\n",
		"```s\ns_nop 0\n```": "s_nop 0\n",
		"<think>```asm\nno\n```</think>```\ns_endpgm\n```": "s_endpgm\n",
		"no code at all": "",
	} {
		got, ok := Extract(reply)
		if got != want || ok != (want != "") {
			t.Errorf("Extract(%q) = %q %v", reply, got, ok)
		}
	}
}

// TestSourceAndFolder: the builtin source's tasks carry what Verify needs;
// a user folder needs its prepared SASS; bench says why it is missing.
func TestSourceAndFolder(t *testing.T) {
	t.Parallel()
	_, task := exampleItem(t)
	if task.Files[FileCUDA] == "" || !strings.Contains(task.Files[FileHIP], "hip_runtime") || task.Meta[MetaKernels] != "_Z11jacobiSweepPKfPfS0_" {
		t.Errorf("task files %d meta %v", len(task.Files), task.Meta)
	}
	if !regexp.MustCompile(`(?s)_Z11jacobiSweepPKfPfS0_.*` + "```sass\ncode for sm_90\nFunction : _Z11jacobiSweepPKfPfS0_" + `.*\(task ` + exampleID + `\)\n?$`).MatchString(task.Prompt) {
		t.Errorf("prompt:\n%s", task.Prompt)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p1", FileCUDA), []byte(exampleSynthProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SetItems(dir); err == nil || !strings.Contains(err.Error(), "sass2rdna prepare") {
		t.Errorf("unprepared folder: %v", err)
	}
	if err := WritePrepared(filepath.Join(dir, preparedDir), Item{ID: "p1", SASS: "code for sm_90\nFunction : x\n", Kernels: []string{"k"}}); err != nil {
		t.Fatal(err)
	}
	items, err := SetItems(dir)
	if err != nil || len(items) != 1 || items[0].Kernels[0] != "k" || !strings.Contains(items[0].HIP, "hip_runtime") {
		t.Errorf("prepared folder: %+v %v", items, err)
	}
	bench, err := SetItems(SetBench)
	if err != nil || len(bench) != 20 {
		t.Fatalf("bench: %d programs, %v", len(bench), err)
	}
	ts, err := source(kit.Tasks{Corpus: SetBench, Seed: 1, SamplesPerTask: 1})
	if err != nil || len(ts.Round0) != 20 || len(ts.Known) != 5 {
		t.Errorf("bench source: %v", err)
	}
	for _, it := range bench {
		if it.HIP == "" || !strings.Contains(it.SASS, "Function : ") || len(it.Kernels) == 0 {
			t.Errorf("bench %s: HIP %d bytes, kernels %v", it.ID, len(it.HIP), it.Kernels)
		}
	}
}

// TestAnswersNotSuspect: no script answer (hipcc's own assembly) trips the
// suspicion check, and the example's cheat does.
func TestAnswersNotSuspect(t *testing.T) {
	t.Parallel()
	items, err := SetItems(SetBuiltin)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		a, err := BuiltinAnswer(it.ID)
		if err != nil {
			t.Fatal(err)
		}
		if why := suspectRDNA(a, runs.Task{}); why != "" {
			t.Errorf("%s: %s", it.ID, why)
		}
	}
}
