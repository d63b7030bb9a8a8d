package c2x86

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
)

func TestStripMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		removed        int
	}{
		{"alone", "\tret\n\t.addrsig\n", "\tret\n\t\n", 1},
		{"with symbol and comment", "\t.addrsig_sym helper # used by address\n", "\t # used by address\n", 1},
		{"any case", "\t.AddrSig\n", "\t\n", 1},
		{"after a label", "end: .addrsig\n", "end: \n", 1},
		{"between statements", "\tnop; .addrsig; ret\n", "\tnop; ; ret\n", 1},
		{"mach-o", "\t.build_version macos, 13, 0\n\t.subsections_via_symbols\n", "\t\n\t\n", 2},
		{"cg_profile", "\t.cg_profile f, g, 10\n", "\t\n", 1},
		{"in a comment", "\t# .addrsig\n/* .addrsig */\n", "\t# .addrsig\n/* .addrsig */\n", 0},
		{"in a block comment", "/*\n.addrsig\n*/ nop\n", "/*\n.addrsig\n*/ nop\n", 0},
		{"in a string", "\t.ascii \".addrsig\"\n", "\t.ascii \".addrsig\"\n", 0},
		{"a statement after data", "\t.long 1 ; .addrsig\n", "\t.long 1 ; \n", 1},
		{"in a ; comment", "\t.long 1086324736 ; 6.0 .addrsig\n", "\t.long 1086324736 ; 6.0 .addrsig\n", 0},
		{"longer name kept", "\t.addrsig_table\n", "\t.addrsig_table\n", 0},
		{"behaviour kept", "\t.set K, 5\n\t.p2align 4\n\t.macro m\n\t.endm\n\t.ident \"x\"\n", "\t.set K, 5\n\t.p2align 4\n\t.macro m\n\t.endm\n\t.ident \"x\"\n", 0},
	}
	for _, tt := range tests {
		got, st := StripMetadata(tt.in)
		if got != tt.want || st.Total() != tt.removed {
			t.Errorf("%s: got %q (%d removed), want %q (%d)", tt.name, got, st.Total(), tt.want, tt.removed)
		}
		if strings.Count(got, "\n") != strings.Count(tt.in, "\n") {
			t.Errorf("%s: line count changed", tt.name)
		}
	}
	if s := (StripStats{".addrsig": 1, ".addrsig_sym": 2}).String(); s != "removed 3 metadata-only directives GNU as rejects: .addrsig (1), .addrsig_sym (2)" {
		t.Errorf("stats text %q", s)
	}
}

// clangStyle is cost_split as clang-15 -O2 -S prints it (its comments and
// metadata directives), plus an .addrsig_sym line as clang writes for a
// function whose address is taken.
const clangStyle = `	.text
	.file	"function.c"
	.section	.rodata.cst4,"aM",@progbits,4
	.p2align	2                               # -- Begin function cost_split
.LCPI0_0:
	.long	0x43500000                      # float 208
	.text
	.globl	cost_split
	.p2align	4, 0x90
	.type	cost_split,@function
cost_split:                             # @cost_split
	.cfi_startproc
# %bb.0:
	movss	.LCPI0_0(%rip), %xmm0           # xmm0 = mem[0],zero,zero,zero
	retq
.Lfunc_end0:
	.size	cost_split, .Lfunc_end0-cost_split
	.cfi_endproc
                                        # -- End function
	.ident	"Debian clang version 15.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
	.addrsig_sym cost_split
`

// TestMetadataDirectivesInVerify: clang's metadata directives are removed
// and named in the convert stage, in AT&T and Intel syntax; everything
// else (an unknown directive, .set, data, sections) is still judged by assembling
// and running.
func TestMetadataDirectivesInVerify(t *testing.T) {
	t.Parallel()
	intel := strings.NewReplacer("\t.text\n\t.file", "\t.text\n\t.intel_syntax noprefix\n\t.file",
		"movss\t.LCPI0_0(%rip), %xmm0", "movss\txmm0, dword ptr [rip + .LCPI0_0]", "retq", "ret").Replace(clangStyle)
	tests := []struct {
		name, asm string
		class     tools.FailureClass
		detail    string // in the convert stage's detail, or the diagnostic
	}{
		{"clang att", clangStyle, tools.ClassNone, ".addrsig (1), .addrsig_sym (1)"},
		{"clang intel", intel, tools.ClassNone, ".addrsig (1), .addrsig_sym (1)"},
		{"clang symbolic", strings.Replace(clangStyle, "\t.long\t0x43500000", "\t.float\t208.0", 1), tools.ClassNone, "1 constants"},
		{"clang ; comment", strings.Replace(clangStyle, "# float 208", "; float 208", 1), tools.ClassNone, "1 comments rewritten"},
		{"clang data changed", strings.Replace(clangStyle, "0x43500000", "0x43510000", 1), tools.ClassWrongOutput, "expected"},
		{"unknown directive", strings.Replace(clangStyle, "\t.addrsig\n", "\t.kiln_metadata\n", 1), tools.ClassAssembleError, "unknown pseudo-op: `.kiln_metadata'"},
		{"set kept", strings.Replace(clangStyle, "\t.long\t0x43500000", "\t.set VAL, 0x43500000\n\t.long\tVAL", 1), tools.ClassNone, ".addrsig (1)"},
		{"set changed", strings.Replace(clangStyle, "\t.long\t0x43500000", "\t.set VAL, 0x43500001\n\t.long\tVAL", 1), tools.ClassWrongOutput, "expected"},
		{"section kept", strings.Replace(clangStyle, ".rodata.cst4,\"aM\",@progbits,4", ".bss", 1), tools.ClassAssembleError, "non-zero value in section `.bss'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verify(t, item(t, "single"), tt.asm)
			if v.Class != tt.class || v.Pass != (tt.class == tools.ClassNone) {
				t.Fatalf("class %s at %s, want %s: %s", v.Class, v.Stage, tt.class, v.Diagnostic)
			}
			text := v.Diagnostic
			if v.Pass {
				text = v.Stages[1].Detail
				if want := float64(strings.Count(tt.asm, "\t.addrsig")); v.Measurements["stripped_directives"] != want {
					t.Errorf("stripped_directives %v, want %v", v.Measurements["stripped_directives"], want)
				}
			}
			if !strings.Contains(text, tt.detail) {
				t.Errorf("%q lacks %q", text, tt.detail)
			}
		})
	}
}

// TestAssembleToolStripsMetadata: the model's assemble tool prepares the
// text as the verifier does.
func TestAssembleToolStripsMetadata(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := testLane.assembleOnly(ctx, clangStyle)
	if err != nil || got != "ok" {
		t.Fatalf("assemble tool: %q, %v", got, err)
	}
	got, err = testLane.assembleOnly(ctx, clangStyle+"\t.kiln_metadata\n")
	if err != nil || !strings.Contains(got, "unknown pseudo-op") {
		t.Fatalf("assemble tool on an unknown directive: %q, %v", got, err)
	}
}
