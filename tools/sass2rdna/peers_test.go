package sass2rdna

// The peer suite: RDNA3 answers as tools print them, not as this lane's
// script answers are made, each with a broken twin, all judged by the
// lane's real verifier. Every peer is generated here from the installed
// tools (nothing generated is committed):
//
//	hipcc -O0, -O3     hipcc --offload-arch=gfx1100 --cuda-device-only -S of the
//	                     item's HIP program (the lane's gfx1100 device-lib
//	                     trick), as printed
//	llvm-mc            hipcc -O3's text parsed and printed back by llvm-mc-15
//	                     -triple=amdgcn-amd-amdhsa -mcpu=gfx1100 (its own
//	                     layout of sections, descriptors and metadata)
//	llvm-mc encoding   the same with -show-encoding (every instruction
//	                     followed by its encoding as a comment)
//
// A CPU host judges every stage but amd-run: a peer must pass them all
// with amd-run pending; a twin must fail at its stage with its class.
//
// hipcc 5.2 (LLVM 15) prints v_mad_u64_u32 whose destination overlaps a
// source, which llvm-mc 15 rejects for gfx1100 (README: a GFX11.0
// hardware bug, which LLVM 16 and later compilers avoid). The suite
// checks that such output fails for that reason alone (asm.mad64_overlap,
// nothing else) and passes once LegaliseMad64 moves the destinations.
//
// Tiers: the default tier runs one program without such overlaps (hipcc
// -O3 and its llvm-mc forms, which assemble to the same code object); -tags
// long adds hipcc -O0, a second program and the overlap program's
// legalised answer.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// peerProgram is a bench program the suite answers, and whether hipcc's
// gfx1100 output of it has overlapping v_mad_u64_u32 (then only the
// overlap check runs on the raw output).
type peerProgram struct {
	id      string
	overlap bool
	long    bool // verified with -tags long only
}

var peerPrograms = []peerProgram{
	{id: "math_04_collatz_stopping_times"},
	{id: "ml_04_layernorm_residual_warp", long: true},
	{id: "math_03_blelloch_scan", overlap: true},
}

// peerTwin is a broken twin of a peer: an edit, and where it must fail.
type peerTwin struct {
	name  string
	edit  func(asm, kernel string) (string, error)
	stage string
	class tools.FailureClass
	label string // the refinement label of the failure
}

var peerTwins = []peerTwin{
	{"kernel descriptor removed", func(asm, _ string) (string, error) { return WithoutDescriptor(asm) },
		StageCheck, ClassDescriptor, "desc.missing_descriptor"},
	{"code symbol misspelled", func(asm, k string) (string, error) { return renameCodeSymbol(asm, k, k+"x") },
		StageCheck, ClassDescriptor, "desc.missing_kernel"},
	{"metadata names another descriptor", func(asm, k string) (string, error) {
		return replaceOnce(asm, ".symbol:         "+k+".kd", ".symbol:         "+k+"_.kd")
	}, StageSymbols, ClassDescriptor, "desc.metadata"},
	{"s_endpgm removed", func(asm, k string) (string, error) { return dropEndpgm(asm, k) },
		StageCheck, ClassDescriptor, "desc.no_endpgm"},
	{"kernarg size shrunk in descriptor and metadata", func(asm, _ string) (string, error) { return shrinkKernarg(asm, true) },
		StageSymbols, ClassDescriptor, "desc.kernarg"},
	{"descriptor kernarg size disagrees with the metadata", func(asm, _ string) (string, error) { return shrinkKernarg(asm, false) },
		StageSymbols, ClassDescriptor, "desc.kernarg"},
}

// peerItem is the bench program's task as the engine verifies it.
var peerItems = sync.OnceValues(func() (map[string]tools.Item, error) {
	items, err := SetItems(SetBench)
	if err != nil {
		return nil, err
	}
	out := map[string]tools.Item{}
	for _, it := range items {
		tk := task(0, it.ID, "", it, nil)
		out[it.ID] = tools.Item{Lane: LaneName, Files: tk.Files, Meta: tk.Meta}
	}
	return out, nil
})

// hipccAsm is hipcc's gfx1100 device assembly of hip at opt, built in the
// sandbox as the lane builds its reference.
func hipccAsm(ctx context.Context, l *Lane, hip, opt string) (string, error) {
	args := append(append([]string{opt}, l.cfg.Toolchains.HIPArgs(toolchain.TargetGFX1100)...), "--cuda-device-only", "-S", "-o", "peer.s", FileHIP)
	return runTool(ctx, l, "peer-hipcc", toolchain.HIPCC, "", args, FileHIP, hip, "peer.s")
}

// llvmMCText is asm parsed and printed back by llvm-mc (with encodings).
func llvmMCText(ctx context.Context, l *Lane, asm string, encoding bool) (string, error) {
	args := []string{"-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-o", "out.s", "in.s"}
	if encoding {
		args = append(args, "-show-encoding")
	}
	return runTool(ctx, l, "peer-llvm-mc", toolchain.LLVMMC, "", args, "in.s", asm, "out.s")
}

func runTool(ctx context.Context, l *Lane, name, tool, path string, args []string, in, src, out string) (string, error) {
	res, err := l.jobs.Run(ctx, buildjob.Job{Name: name, Steps: []buildjob.Step{{Tool: tool, Path: path, Args: args}},
		Inputs: map[string][]byte{in: []byte(src)}, Outputs: []string{out}})
	if err != nil {
		return "", err
	}
	if !res.OK() {
		return "", fmt.Errorf("%s: %s", name, diagnostic(res, 8))
	}
	return string(res.Entry.Files[out]), nil
}

// TestPeers verifies tool-printed RDNA3 answers and their twins.
func TestPeers(t *testing.T) {
	t.Parallel()
	l := testLane(t)
	items, err := peerItems()
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := refinement.NewLanes(mustRules(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	n := 0
	for _, p := range peerPrograms {
		if p.long && !longTier {
			continue
		}
		item, ok := items[p.id]
		if !ok {
			t.Fatalf("no bench program %s", p.id)
		}
		o3, err := hipccAsm(ctx, l, item.Files[FileHIP], "-O3")
		if err != nil {
			t.Fatal(err)
		}
		if p.overlap {
			n += checkOverlapPeer(ctx, t, l, item, p.id, o3)
			continue
		}
		peers := map[string]string{"hipcc -O3": o3}
		styles := []string{"hipcc -O3", "llvm-mc", "llvm-mc encoding"}
		if longTier {
			if peers["hipcc -O0"], err = hipccAsm(ctx, l, item.Files[FileHIP], "-O0"); err != nil {
				t.Fatal(err)
			}
			styles = append(styles, "hipcc -O0")
		}
		if peers["llvm-mc"], err = llvmMCText(ctx, l, o3, false); err != nil {
			t.Fatal(err)
		}
		if peers["llvm-mc encoding"], err = llvmMCText(ctx, l, o3, true); err != nil {
			t.Fatal(err)
		}
		for _, style := range styles {
			asm := peers[style]
			checkPeer(ctx, t, l, item, p.id+"/"+style, asm, "", "", "")
			n++
			kernel := strings.Fields(item.Meta[MetaKernels])[0]
			for _, tw := range peerTwins {
				twin, err := tw.edit(asm, kernel)
				if err != nil {
					t.Fatalf("%s/%s twin %q: %v", p.id, style, tw.name, err)
				}
				name := p.id + "/" + style + "/" + tw.name
				v := checkPeer(ctx, t, l, item, name, twin, tw.stage, tw.class, tw.label)
				n++
				if v.Class == "" {
					continue
				}
				res := runs.Result{Task: runs.Task{Lane: LaneName}, Attempt: runs.Attempt{Answer: twin},
					Verdict: runs.Verdict{Class: string(v.Class), Stage: v.Stage, Diagnostic: v.Diagnostic}}
				if got := lanes.Labeler().Labels(res, "").DiagnosticKind; got != tw.label {
					t.Errorf("%s: label %s, want %s (%q)", name, got, tw.label, v.Diagnostic)
				}
			}
		}
	}
	t.Logf("%d answers in %.1fs", n, time.Since(start).Seconds())
}

// checkPeer verifies asm: with class "" it must pass every CPU stage with
// only amd-run pending, else fail at stage with class.
func checkPeer(ctx context.Context, t *testing.T, l *Lane, item tools.Item, name, asm, stage string, class tools.FailureClass, _ string) tools.Verdict {
	t.Helper()
	start := time.Now()
	v, err := l.Verify(ctx, item, asm)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	pending := tools.PendingStages(v)
	t.Logf("%-72s %-16s at %-10s %5.1fs", name, v.Class, v.Stage, time.Since(start).Seconds())
	if class == "" {
		if v.Class != "" || !v.Pass || strings.Join(pending, ",") != StageAMDRun {
			t.Errorf("%s: a peer gives %v %s at %s (pending %v): %.800s", name, v.Pass, v.Class, v.Stage, pending, v.Diagnostic)
		}
		return v
	}
	if v.Pass || v.Class != class || v.Stage != stage {
		t.Errorf("%s: a twin gives pass=%v %s at %s (pending %v), want %s at %s: %.600s", name, v.Pass, v.Class, v.Stage, pending, class, stage, v.Diagnostic)
	}
	return v
}

// checkOverlapPeer: hipcc's raw output of a program with overlapping
// v_mad_u64_u32 fails at assemble on that error alone, and passes once
// legalised. It returns the answers verified.
func checkOverlapPeer(ctx context.Context, t *testing.T, l *Lane, item tools.Item, id, raw string) int {
	t.Helper()
	if len(scanAsm(raw).madOverlaps) == 0 {
		t.Fatalf("%s: hipcc's output has no overlapping v_mad_u64_u32 any more: move it to the plain peers", id)
	}
	v := checkPeer(ctx, t, l, item, id+"/hipcc -O3 (v_mad_u64_u32 overlaps)", raw, StageAssemble, tools.ClassAssembleError, "")
	errLines := regexp.MustCompile(`(?m)error: .*$`).FindAllString(v.Diagnostic, -1)
	for _, e := range errLines {
		if !strings.Contains(e, "destination must be different than all sources") {
			t.Errorf("%s: llvm-mc rejects hipcc's output for another reason: %s", id, e)
		}
	}
	if len(errLines) == 0 || !strings.Contains(v.Diagnostic, "free VGPR pair") {
		t.Errorf("%s: the diagnostic does not name the overlap and its fix: %s", id, v.Diagnostic)
	}
	if !longTier {
		return 1
	}
	fixed, n, err := LegaliseMad64(raw)
	if err != nil || n == 0 {
		t.Fatalf("%s: legalise: %d rewritten, %v", id, n, err)
	}
	checkPeer(ctx, t, l, item, id+"/hipcc -O3 legalised", fixed, "", "", "")
	return 2
}

// replaceOnce replaces old, which must occur once, by new.
func replaceOnce(s, old, new string) (string, error) {
	if n := strings.Count(s, old); n != 1 {
		return "", fmt.Errorf("%q occurs %d times", old, n)
	}
	return strings.Replace(s, old, new, 1), nil
}

// renameCodeSymbol renames a kernel's code symbol (its label, symbol
// directives and references), leaving its descriptor and metadata naming
// the old one.
func renameCodeSymbol(asm, k, to string) (string, error) {
	if !strings.Contains(asm, "\n"+k+":") {
		return "", fmt.Errorf("no label %s", k)
	}
	out := strings.ReplaceAll(asm, k, to)
	for _, keep := range []string{".amdhsa_kernel %s", "%s.kd", ".name:           %s"} {
		out = strings.ReplaceAll(out, fmt.Sprintf(keep, to), fmt.Sprintf(keep, k))
	}
	return out, nil
}

// dropEndpgm removes the s_endpgm instructions of kernel k's code.
func dropEndpgm(asm, k string) (string, error) {
	start := strings.Index(asm, "\n"+k+":")
	if start < 0 {
		return "", fmt.Errorf("no label %s", k)
	}
	end := strings.Index(asm[start:], ".Lfunc_end")
	if end < 0 {
		return "", fmt.Errorf("no end of %s", k)
	}
	body := asm[start : start+end]
	re := regexp.MustCompile(`(?m)^\s*s_endpgm\b.*\n`)
	if !re.MatchString(body) {
		return "", fmt.Errorf("%s has no s_endpgm", k)
	}
	return asm[:start] + re.ReplaceAllString(body, "") + asm[start+end:], nil
}

// shrinkKernarg sets the first kernel's kernarg size to 8 bytes, less
// than its arguments take: in its descriptor and, with meta, in its
// metadata too.
func shrinkKernarg(asm string, meta bool) (string, error) {
	out := asm
	res := []*regexp.Regexp{regexp.MustCompile(`\.amdhsa_kernarg_size\s+(\d+)`)}
	if meta {
		res = append(res, regexp.MustCompile(`\.kernarg_segment_size:\s*(\d+)`))
	}
	for _, re := range res {
		m := re.FindStringSubmatchIndex(out)
		if m == nil {
			return "", fmt.Errorf("no %s", re)
		}
		if v := out[m[2]:m[3]]; v == "8" || v == "0" {
			return "", fmt.Errorf("kernarg size %s: nothing to shrink", v)
		}
		out = out[:m[2]] + "8" + out[m[3]:]
	}
	return out, nil
}
