package sass2rdna

import (
	"strings"
	"testing"
)

// TestKernelEnd: a kernel must have an s_endpgm and must not run off the
// end of its code; trailing padding and a final branch are fine.
func TestKernelEnd(t *testing.T) {
	t.Parallel()
	const head = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"\n.text\n"
	const desc = "\n.section .rodata\n.amdhsa_kernel k\n.end_amdhsa_kernel\n"
	for _, tc := range []struct{ name, body, want string }{
		{"endpgm", "k:\n s_mov_b32 s0, 0\n s_endpgm\n", ""},
		{"padding after", "k:\n s_endpgm\n s_code_end\n s_nop 0\n", ""},
		{"return block first", "k:\n s_cbranch_scc0 .LBB0_2\n s_endpgm\n.LBB0_2:\n v_mov_b32 v0, 0\n s_branch .LBB0_1\n", ""},
		{"no endpgm", "k:\n s_mov_b32 s0, 0\n", "has no s_endpgm"},
		{"falls through", "k:\n s_cbranch_scc0 .LBB0_2\n s_endpgm\n.LBB0_2:\n v_mov_b32 v0, 0\n", "ends with v_mov_b32"},
		{"next function after", "k:\n s_endpgm\n.LBB0_1:\n s_mov_b32 s1, 1\nf:\n s_setpc_b64 s[30:31]\n", "ends with s_mov_b32"},
	} {
		got := strings.Join(checkStatic(scanAsm(head+tc.body+desc), []string{"k"}), "\n")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestKernargProblems: the descriptor's kernarg size must agree with the
// metadata's and hold the metadata's and the reference's arguments.
func TestKernargProblems(t *testing.T) {
	t.Parallel()
	meta := func(size string, args ...string) string {
		return ".amdgpu_metadata\n---\namdhsa.kernels:\n  - .args:\n" + strings.Join(args, "") +
			"    .kernarg_segment_size: " + size + "\n    .name:           k\n    .symbol:         k.kd\n...\n\t.end_amdgpu_metadata\n"
	}
	arg := func(off, size, kind string) string {
		return "      - .offset: " + off + "\n        .size: " + size + "\n        .value_kind: " + kind + "\n"
	}
	ref := metadataKernels(meta("272", arg("0", "8", "global_buffer"), arg("8", "4", "by_value"), arg("16", "8", "hidden_block_count_x")))
	if k := ref["k"]; k.KernargSize == nil || *k.KernargSize != 272 || len(k.Args) != 3 || k.explicitEnd() != 12 {
		t.Fatalf("reference metadata %+v", ref)
	}
	found := func(size uint32) []codeObjectKernel {
		return []codeObjectKernel{{name: "k", desc: kernelDescriptor{KernargSize: size}}}
	}
	for _, tc := range []struct {
		name   string
		size   uint32
		answer string
		want   string
	}{
		{"hipcc's", 272, meta("272", arg("0", "8", "global_buffer"), arg("8", "4", "by_value")), ""},
		{"no hidden arguments", 12, meta("12", arg("0", "8", "global_buffer"), arg("8", "4", "by_value")), ""},
		{"descriptor disagrees", 8, meta("272", arg("0", "8", "global_buffer")), "the metadata's .kernarg_segment_size 272"},
		{"argument outside", 8, meta("8", arg("0", "8", "global_buffer"), arg("8", "4", "by_value")), "lies beyond the 8-byte"},
		{"arguments dropped", 8, meta("8", arg("0", "8", "global_buffer")), "cannot hold the 12 bytes"},
		{"metadata unreadable", 272, ".amdgpu_metadata\n: : :\n.end_amdgpu_metadata\n", ""},
	} {
		got := strings.Join(kernargProblems(found(tc.size), metadataKernels(tc.answer), ref), "\n")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.name, got, tc.want)
		}
	}
}
