package rollptx

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkRoll rolls in, compares with want and checks the round trip.
func checkRoll(t *testing.T, in, want string) {
	t.Helper()
	got, st := RollStats(in)
	if got != want {
		t.Errorf("Roll:\n%s\nwant:\n%s", got, want)
	}
	back, err := Unroll(got)
	if err != nil {
		t.Fatalf("Unroll: %v", err)
	}
	if back != in {
		t.Errorf("round trip differs:\n%s\nwant:\n%s", back, in)
	}
	if st.OutBytes != len(got) || st.InBytes != len(in) {
		t.Errorf("stats %+v", st)
	}
}

// figure8 is the unrolled copy loop of PtxDec's Figure 8 with 8 iterations.
func figure8() string {
	var b strings.Builder
	b.WriteString("$L__BB1_11:\n")
	for i := range 8 {
		f := 882 + 4*i
		fmt.Fprintf(&b, "\tld.local.v4.f32 \t{%%f%d, %%f%d, %%f%d, %%f%d}, [%%rd37+%d];\n", f, f+1, f+2, f+3, 16*i)
		for k := range 4 {
			fmt.Fprintf(&b, "\tst.global.f32 \t[%%rd38+%d], %%f%d;\n", -64+16*i+4*k, f+k)
		}
	}
	b.WriteString("\tadd.s64 \t%rd38, %rd38, 128;\n\tadd.s64 \t%rd37, %rd37, 128;\n" +
		"\tadd.s32 \t%r134, %r134, 1;\n\tsetp.ne.s32 \t%p6, %r134, 32;\n\t@%p6 bra \t$L__BB1_11;\n")
	// nvcc writes offset 0 as nothing: [%rd37], not [%rd37+0]
	return strings.ReplaceAll(b.String(), "+0]", "]")
}

func TestRollFigure8(t *testing.T) {
	t.Parallel()
	want := "$L__BB1_11:\n" +
		"\tfor.size.5 i in range(0, 8, 1):\n" +
		"\t\tld.local.v4.f32 \t{%f(882+i*4), %f(883+i*4), %f(884+i*4), %f(885+i*4)}, [%rd37+(0+i*16)];\n" +
		"\t\tst.global.f32 \t[%rd38+(-64+i*16)], %f(882+i*4);\n" +
		"\t\tst.global.f32 \t[%rd38+(-60+i*16)], %f(883+i*4);\n" +
		"\t\tst.global.f32 \t[%rd38+(-56+i*16)], %f(884+i*4);\n" +
		"\t\tst.global.f32 \t[%rd38+(-52+i*16)], %f(885+i*4);\n" +
		"\tadd.s64 \t%rd38, %rd38, 128;\n\tadd.s64 \t%rd37, %rd37, 128;\n" +
		"\tadd.s32 \t%r134, %r134, 1;\n\tsetp.ne.s32 \t%p6, %r134, 32;\n\t@%p6 bra \t$L__BB1_11;\n"
	checkRoll(t, figure8(), want)
}

// TestRollDotProduct is nvcc's unrolled 16-step dot product (matmul tile):
// the first iteration reads the accumulator %f62 and the last writes it, so
// 14 iterations fold. The loop starts at the fma of iteration 1 rather than at
// its first load: that rotation is one byte shorter (the loads left outside
// hold +64 and +4 instead of +960 and +60).
func TestRollDotProduct(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	in.WriteString("\tbar.sync \t0;\n")
	acc := 62
	for i := range 16 {
		a, b, c := 12+3*i, 13+3*i, 14+3*i
		if i == 0 {
			fmt.Fprintf(&in, "\tld.shared.f32 \t%%f%d, [%%r9];\n\tld.shared.f32 \t%%f%d, [%%r8];\n", a, b)
		} else {
			fmt.Fprintf(&in, "\tld.shared.f32 \t%%f%d, [%%r9+%d];\n\tld.shared.f32 \t%%f%d, [%%r8+%d];\n", a, 64*i, b, 4*i)
		}
		if i == 15 {
			c = 62
		}
		fmt.Fprintf(&in, "\tfma.rn.f32 \t%%f%d, %%f%d, %%f%d, %%f%d;\n", c, b, a, acc)
		acc = c
	}
	in.WriteString("\tbar.sync \t0;\n")
	want := "\tbar.sync \t0;\n" +
		"\tld.shared.f32 \t%f12, [%r9];\n" +
		"\tld.shared.f32 \t%f13, [%r8];\n" +
		"\tfma.rn.f32 \t%f14, %f13, %f12, %f62;\n" +
		"\tld.shared.f32 \t%f15, [%r9+64];\n" +
		"\tld.shared.f32 \t%f16, [%r8+4];\n" +
		"\tfor.size.3 i in range(0, 14, 1):\n" +
		"\t\tfma.rn.f32 \t%f(17+i*3), %f(16+i*3), %f(15+i*3), %f(14+i*3);\n" +
		"\t\tld.shared.f32 \t%f(18+i*3), [%r9+(128+i*64)];\n" +
		"\t\tld.shared.f32 \t%f(19+i*3), [%r8+(8+i*4)];\n" +
		"\tfma.rn.f32 \t%f62, %f58, %f57, %f56;\n" +
		"\tbar.sync \t0;\n"
	checkRoll(t, in.String(), want)
}

// TestRollNested: rows of an unrolled 2-D copy whose offsets jump between
// rows fold into loops, and the loops into a loop over j.
func TestRollNested(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for j := range 4 {
		for i := range 8 {
			fmt.Fprintf(&in, "\tld.global.f32 \t%%f%d, [%%rd4+%d];\n", 1+2*i+16*j, 4*i+128*j)
			fmt.Fprintf(&in, "\tst.shared.f32 \t[%%r3+%d], %%f%d;\n", 4*i+64*j, 1+2*i+16*j)
		}
	}
	// [%rd4+0] is written [%rd4] by nvcc: offset 0 prints as nothing.
	s := strings.ReplaceAll(in.String(), "+0]", "]")
	want := "\tfor.size.3 j in range(0, 4, 1):\n" +
		"\t\tfor.size.2 i in range(0, 8, 1):\n" +
		"\t\t\tld.global.f32 \t%f(1+i*2+j*16), [%rd4+(0+i*4+j*128)];\n" +
		"\t\t\tst.shared.f32 \t[%r3+(0+i*4+j*64)], %f(1+i*2+j*16);\n"
	checkRoll(t, s, want)
	_, st := RollStats(s)
	if st.Loops != 2 || st.MaxDepth != 2 || st.OutStatements != 4 || st.InStatements != 64 {
		t.Errorf("stats %+v", st)
	}
}

// TestRollThreeLevels: a 3-deep unrolled nest gives i, j and k.
func TestRollThreeLevels(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for k := range 3 {
		for j := range 3 {
			for i := range 4 {
				fmt.Fprintf(&in, "\tst.global.u32 \t[%%rd%d+%d], %%r%d;\n", 7+k, 4*i+100*j, 10+i+7*j+50*k)
			}
		}
	}
	want := "\tfor.size.3 k in range(0, 3, 1):\n" +
		"\t\tfor.size.2 j in range(0, 3, 1):\n" +
		"\t\t\tfor.size.1 i in range(0, 4, 1):\n" +
		"\t\t\t\tst.global.u32 \t[%rd(7+k*1)+(0+i*4+j*100)], %r(10+i*1+j*7+k*50);\n"
	checkRoll(t, strings.ReplaceAll(in.String(), "+0]", "]"), want)
}

func TestRollImmediatesAndNegativeSteps(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for i := range 6 {
		fmt.Fprintf(&in, "\tshfl.sync.down.b32 \t%%r%d|%%p%d, %%r%d, %d, 31, -1;\n", 100-2*i, 1+i, 99-2*i, 16>>0-3*i)
		fmt.Fprintf(&in, "\tadd.s32 \t%%r%d, %%r%d, %d;\n", 98-2*i, 100-2*i, -5+i)
	}
	want := "\tfor.size.2 i in range(0, 6, 1):\n" +
		"\t\tshfl.sync.down.b32 \t%r(100-i*2)|%p(1+i*1), %r(99-i*2), (16-i*3), 31, -1;\n" +
		"\t\tadd.s32 \t%r(98-i*2), %r(100-i*2), (-5+i*1);\n"
	checkRoll(t, in.String(), want)
}

// TestRollTwoIterations: two iterations fold only when the registers of each
// prefix move by one step (the last two steps of a shuffle reduction here).
func TestRollTwoIterations(t *testing.T) {
	t.Parallel()
	in := "\tmov.u32 \t%r28, 8;\n\tshfl.sync.down.b32 \t%r29|%p4, %r27, %r28, %r23, %r25;\n\tadd.s32 \t%r30, %r29, %r27;\n" +
		"\tmov.u32 \t%r31, 4;\n\tshfl.sync.down.b32 \t%r32|%p5, %r30, %r31, %r23, %r25;\n\tadd.s32 \t%r33, %r32, %r30;\n"
	want := "\tfor.size.3 i in range(0, 2, 1):\n" +
		"\t\tmov.u32 \t%r(28+i*3), (8-i*4);\n" +
		"\t\tshfl.sync.down.b32 \t%r(29+i*3)|%p(4+i*1), %r(27+i*3), %r(28+i*3), %r23, %r25;\n" +
		"\t\tadd.s32 \t%r(30+i*3), %r(29+i*3), %r(27+i*3);\n"
	checkRoll(t, in, want)
	// %r33 -> %r40: the %r numbers move by 3 and by 10
	odd := strings.Replace(in, "%r33", "%r40", 1)
	if got := Roll(odd); got != odd {
		t.Errorf("Roll folded two iterations with uneven register steps:\n%s", got)
	}
	// with a third iteration uneven steps are fine (downward numbered
	// values live out of the block, upward temporaries)
	var three strings.Builder
	for i := range 3 {
		fmt.Fprintf(&three, "\tld.const.u8 \t%%rs%d, [k+%d];\n\txor.b16 \t%%rs%d, %%rs%d, %%rs%d;\n", 112+i, i, 293-i, 112+i, 98+i)
	}
	want3 := "\tfor.size.2 i in range(0, 3, 1):\n" +
		"\t\tld.const.u8 \t%rs(112+i*1), [k+(0+i*1)];\n" +
		"\t\txor.b16 \t%rs(293-i*1), %rs(112+i*1), %rs(98+i*1);\n"
	checkRoll(t, strings.ReplaceAll(three.String(), "+0]", "]"), want3)
}

// treeReduction is nvcc's unrolled shared-memory tree reduction (the loop
// for (s = 256; s > 0; s >>= 1) of 4-byte values): steps blocks, each a
// label, a branch and a block, the offsets halving.
func treeReduction(steps int) string {
	var b strings.Builder
	b.WriteString("\tbar.sync \t0;\n")
	for k := range steps {
		s := 256 >> k
		fmt.Fprintf(&b, "\tsetp.gt.u32 \t%%p%d, %%r1, %d;\n\t@%%p%d bra \t$L__BB0_%d;\n\n", 4+k, s/4-1, 4+k, 8+2*k)
		fmt.Fprintf(&b, "\tld.shared.f32 \t%%f%d, [%%r3];\n\tld.shared.f32 \t%%f%d, [%%r3+%d];\n", 10+3*k, 11+3*k, s)
		fmt.Fprintf(&b, "\tadd.f32 \t%%f%d, %%f%d, %%f%d;\n\tst.shared.f32 \t[%%r3], %%f%d;\n\n", 12+3*k, 11+3*k, 10+3*k, 12+3*k)
		fmt.Fprintf(&b, "$L__BB0_%d:\n\tbar.sync \t0;\n", 8+2*k)
	}
	return b.String()
}

// TestRollBlocks: an unrolled loop whose body holds an if, so that every
// iteration is a branch, a block and a label, folds with its labels, branch
// targets and blank lines; the loop takes the indentation the body's lines
// share (none: labels stand at the start of the line), blank lines stay
// blank.
func TestRollBlocks(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	in.WriteString("\tmov.f32 \t%f1, 0f00000000;\n")
	for i := range 6 {
		fmt.Fprintf(&in, "\tld.global.nc.u32 \t%%r%d, [%%rd5+%d];\n", 10+i, 4*i)
		fmt.Fprintf(&in, "\tsetp.lt.s32 \t%%p%d, %%r%d, 0;\n\t@%%p%d bra \t$L__BB0_%d;\n\n", 2+i, 10+i, 2+i, 3+2*i)
		fmt.Fprintf(&in, "\tld.global.nc.f32 \t%%f%d, [%%rd6+%d];\n\tadd.f32 \t%%f1, %%f1, %%f%d;\n\n", 20+i, 4*i, 20+i)
		fmt.Fprintf(&in, "$L__BB0_%d:\n", 3+2*i)
	}
	in.WriteString("\tst.global.f32 \t[%rd7], %f1;\n")
	want := "\tmov.f32 \t%f1, 0f00000000;\n" +
		"for.size.8 i in range(0, 6, 1):\n" +
		"\t\tld.global.nc.u32 \t%r(10+i*1), [%rd5+(0+i*4)];\n" +
		"\t\tsetp.lt.s32 \t%p(2+i*1), %r(10+i*1), 0;\n" +
		"\t\t@%p(2+i*1) bra \t$L__BB0_(3+i*2);\n" +
		"\n" +
		"\t\tld.global.nc.f32 \t%f(20+i*1), [%rd6+(0+i*4)];\n" +
		"\t\tadd.f32 \t%f1, %f1, %f(20+i*1);\n" +
		"\n" +
		"\t$L__BB0_(3+i*2):\n" +
		"\tst.global.f32 \t[%rd7], %f1;\n"
	checkRoll(t, strings.ReplaceAll(in.String(), "+0]", "]"), want)
}

// TestRollComments: comment lines (nvcc's "// begin inline asm") are part of
// the repeated body.
func TestRollComments(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for i := range 4 {
		fmt.Fprintf(&in, "\t// begin inline asm\n\tshf.r.wrap.b32 %%r%d, %%r%d, %%r%d, 7;\n\t// end inline asm\n", 100+3*i, 40+i, 40+i)
		fmt.Fprintf(&in, "\txor.b32 \t%%r%d, %%r%d, %%r%d;\n", 60+i, 100+3*i, 50+i)
	}
	want := "\tfor.size.4 i in range(0, 4, 1):\n" +
		"\t\t// begin inline asm\n" +
		"\t\tshf.r.wrap.b32 %r(100+i*3), %r(40+i*1), %r(40+i*1), 7;\n" +
		"\t\t// end inline asm\n" +
		"\t\txor.b32 \t%r(60+i*1), %r(100+i*3), %r(50+i*1);\n"
	checkRoll(t, in.String(), want)
}

// TestRollTables: numbers other than registers that do not move by equal
// steps become tables when they move in one direction by changing steps,
// like the strides of a tree reduction.
func TestRollTables(t *testing.T) {
	t.Parallel()
	want := "\tbar.sync \t0;\n" +
		"for.size.10 i in range(0, 6, 1):\n" +
		"\t\tsetp.gt.u32 \t%p(4+i*1), %r1, {63, 31, 15, 7, 3, 1}[i];\n" +
		"\t\t@%p(4+i*1) bra \t$L__BB0_(8+i*2);\n" +
		"\n" +
		"\t\tld.shared.f32 \t%f(10+i*3), [%r3];\n" +
		"\t\tld.shared.f32 \t%f(11+i*3), [%r3+{256, 128, 64, 32, 16, 8}[i]];\n" +
		"\t\tadd.f32 \t%f(12+i*3), %f(11+i*3), %f(10+i*3);\n" +
		"\t\tst.shared.f32 \t[%r3], %f(12+i*3);\n" +
		"\n" +
		"\t$L__BB0_(8+i*2):\n" +
		"\t\tbar.sync \t0;\n"
	checkRoll(t, treeReduction(6), want)
	// three steps: a table of three
	if got := Roll(treeReduction(3)); !strings.Contains(got, "{63, 31, 15}[i]") || !strings.Contains(got, "[%r3+{256, 128, 64}[i]]") {
		t.Errorf("three steps:\n%s", got)
	}
	// two steps: two values are always affine, and a table of two is
	// never shorter
	if got := Roll(treeReduction(2)); !strings.Contains(got, "%r1, (63-i*32);") {
		t.Errorf("two steps:\n%s", got)
	}
	// values that go up and down (a filter's coefficients loaded in the
	// order the compiler chose) make no table
	var in strings.Builder
	for i, off := range []int{24, 12, 16, 40, 28} {
		fmt.Fprintf(&in, "\tld.const.f32 \t%%f%d, [cFilter+%d];\n\tfma.rn.f32 \t%%f%d, %%f%d, %%f%d, %%f%d;\n", 5+2*i, off, 6+2*i, 5+2*i, 30, 4+2*i)
	}
	if got := Roll(in.String()); strings.Contains(got, "}[") {
		t.Errorf("a table of values that go up and down:\n%s", got)
	}
	// a table must not hide a nest: offsets 0 4 8 12 | 128 132 136 140
	// fold into loops that nest (see TestRollNested)
}

func TestGeometricSteps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v  []int64
		ok bool
	}{
		{[]int64{256, 128, 64, 32}, true},
		{[]int64{63, 31, 15, 7, 3, 1}, true},
		{[]int64{255, 127, 63, 31, 15, 7, 3, 1, 0}, true},
		{[]int64{1, 3, 7, 15}, true},
		{[]int64{4, 2, 1}, true},
		{[]int64{4, 8, 16}, true},
		{[]int64{1, 5, 21}, true},    // radix 4
		{[]int64{36, 56, 96}, false}, // steps that are no powers of two
		{[]int64{52, 72, 76}, false},
		{[]int64{0, 4, 8}, false}, // equal steps: a loop, no table
		{[]int64{512, 0, 512}, false},
		{[]int64{1, 2, 4, 8, 17}, false},
		{[]int64{1, 2, 4, 7}, false},
		{[]int64{4, 2}, false},
	} {
		if got := geometricSteps(c.v); got != c.ok {
			t.Errorf("geometricSteps(%v) = %v", c.v, got)
		}
	}
}

// TestRollTwoIterationChunks: two iterations of a longer run of equal shapes
// fold only when the run's immediates and offsets go on by the same step
// (only registers break it off), and no two iterations of a body that
// repeats within itself fold.
func TestRollTwoIterationChunks(t *testing.T) {
	t.Parallel()
	// a dot product: the offsets go on, the third fma writes the
	// accumulator (a register out of step): two iterations fold
	in := "\tfma.rn.f32 \t%f18, %f17, %f16, %f15;\n\tld.shared.f32 \t%f19, [%r48];\n\tld.shared.f32 \t%f20, [%r47];\n" +
		"\tfma.rn.f32 \t%f21, %f20, %f19, %f18;\n\tld.shared.f32 \t%f22, [%r48+64];\n\tld.shared.f32 \t%f23, [%r47+4];\n" +
		"\tfma.rn.f32 \t%f62, %f23, %f22, %f21;\n\tld.shared.f32 \t%f25, [%r48+128];\n\tld.shared.f32 \t%f26, [%r47+8];\n" +
		"\tbar.sync \t0;\n"
	want := "\tfor.size.3 i in range(0, 2, 1):\n" +
		"\t\tfma.rn.f32 \t%f(18+i*3), %f(17+i*3), %f(16+i*3), %f(15+i*3);\n" +
		"\t\tld.shared.f32 \t%f(19+i*3), [%r48+(0+i*64)];\n" +
		"\t\tld.shared.f32 \t%f(20+i*3), [%r47+(0+i*4)];\n" +
		"\tfma.rn.f32 \t%f62, %f23, %f22, %f21;\n\tld.shared.f32 \t%f25, [%r48+128];\n\tld.shared.f32 \t%f26, [%r47+8];\n" +
		"\tbar.sync \t0;\n"
	checkRoll(t, in, want)
}

func TestRollLeavesAlone(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"empty":      "",
		"no newline": "\tadd.s32 \t%r1, %r1, 1;\n\tadd.s32 \t%r2, %r2, 1;\n\tadd.s32 \t%r3, %r3, 1;",
		// two short repeats: a loop would be longer
		"not shorter": "\tmov.u32 \t%r1, 0;\n\tmov.u32 \t%r2, 0;\n",
		// labels, comments, directives, braces and branches that do not
		// repeat with the statements around them
		"separators": "\tadd.s32 \t%r1, %r1, 1;\n$L__BB0_1:\n\tadd.s32 \t%r2, %r2, 1;\n" +
			"\t// c\n\tadd.s32 \t%r3, %r3, 1;\n\t.reg .b32 %r<4>;\n\tadd.s32 \t%r4, %r4, 1;\n" +
			"\t{\n\tadd.s32 \t%r5, %r5, 1;\n\t}\n\tadd.s32 \t%r6, %r6, 1;\n\tbra.uni \t$L__BB0_1;\n" +
			"\tadd.s32 \t%r7, %r7, 1;\n\n\tadd.s32 \t%r8, %r8, 1;\n",
		// lines with parentheses (call sequences) never fold
		"parentheses": strings.Repeat("\tcall.uni (retval0), vprintf, (param0, param1);\n", 10),
		// a list of constants is no loop, not even with a table
		"constants": "\tmov.u32 \t%r40, 2;\n\tmov.u32 \t%r41, 31;\n\tmov.u32 \t%r42, 16;\n\tmov.u32 \t%r43, -1;\n" +
			"\tmov.u32 \t%r44, 7;\n\tmov.u32 \t%r45, 90;\n",
		// "}[" ends a table inside a body: such a line never folds
		"table-like": strings.Repeat("\tst.u32 \t[%rd1], {1, 2}[i];\n", 10),
		// the numbers do not move by equal steps
		"not affine": "\tld.const.u32 \t%r1, [k+4];\n\tld.const.u32 \t%r2, [k+8];\n\tld.const.u32 \t%r3, [k+16];\n\tld.const.u32 \t%r4, [k+32];\n",
		// indentation changes
		"indentation": "\tadd.s32 \t%r1, %r1, 1;\n  add.s32 \t%r2, %r2, 1;\n\tadd.s32 \t%r3, %r3, 1;\n  add.s32 \t%r4, %r4, 1;\n",
		// numbers not written canonically stay literal and do not match
		"non-canonical": "\tld.u32 \t%r1, [%rd1+00];\n\tld.u32 \t%r2, [%rd1+01];\n\tld.u32 \t%r3, [%rd1+02];\n\tld.u32 \t%r4, [%rd1+03];\n",
		// a line Unroll would read as a loop header
		"header-like": "\tfor.size.1 i in range(0, 2, 1):\n" + strings.Repeat("\tst.u32 \t[%rd1], %r1;\n", 20),
	} {
		if got := Roll(in); got != in {
			t.Errorf("%s: Roll changed the text:\n%s", name, got)
		}
	}
}

// TestRollCRLF: lines with "\r" are not statements and are kept as they are.
func TestRollCRLF(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("\tst.global.f32 \t[%rd1], %f1;\r\n", 10)
	if got := Roll(in); got != in {
		t.Errorf("Roll changed CRLF text:\n%q", got)
	}
}

func TestRollFoldsWhenUniform(t *testing.T) {
	t.Parallel()
	// Same text with two-space indentation folds with that indentation.
	in := strings.ReplaceAll(figure8(), "\t", "  ")
	got := Roll(in)
	if !strings.Contains(got, "  for.size.5 i in range(0, 8, 1):\n  \tld.local") {
		t.Errorf("Roll:\n%s", got)
	}
	if back, err := Unroll(got); err != nil || back != in {
		t.Errorf("round trip: %v", err)
	}
}

func TestUnrollRanges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"\tfor.size.1 i in range(2, 10, 3):\n\t\tmov.u32 \t%r(1+i*10), (i*0+i*1);\nx\n", ""},
		{"\tfor.size.1 i in range(2, 10, 3):\n\t\tmov.u32 \t%r(1+i*10), (0+i*1);\nx\n",
			"\tmov.u32 \t%r21, 2;\n\tmov.u32 \t%r51, 5;\n\tmov.u32 \t%r81, 8;\nx\n"},
		{"for.size.1 i in range(3, 0, -1):\n\tld.u8 \t%rs(0+i*1), [a+(-2+i*1)];\n",
			"ld.u8 \t%rs3, [a+1];\nld.u8 \t%rs2, [a];\nld.u8 \t%rs1, [a+-1];\n"},
		{"\tfor.size.2 j in range(0, 2, 1):\n\t\tfor.size.1 i in range(0, 2, 1):\n\t\t\tst.u32 \t[%rd1+(0+i*4+j*8)], %r(1-i*1+j*5);\n",
			"\tst.u32 \t[%rd1], %r1;\n\tst.u32 \t[%rd1+4], %r0;\n\tst.u32 \t[%rd1+8], %r6;\n\tst.u32 \t[%rd1+12], %r5;\n"},
		// a blank line in a body is a blank line; the loop's indentation
		// (none here) is what its lines share
		{"for.size.3 i in range(0, 2, 1):\n\t$L__BB0_(1+i*2):\n\n\t\t@%p(1+i*1) bra \t$L__BB0_(3+i*2);\n",
			"$L__BB0_1:\n\n\t@%p1 bra \t$L__BB0_3;\n$L__BB0_3:\n\n\t@%p2 bra \t$L__BB0_5;\n"},
		// outside loops parentheses are plain text
		{"\tcall.uni (retval0), f, (param0);\n", "\tcall.uni (retval0), f, (param0);\n"},
		{"no newline at the end", "no newline at the end"},
	} {
		got, err := Unroll(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("Unroll(%q) = %q, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Unroll(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestUnrollErrors(t *testing.T) {
	t.Parallel()
	body := "\t\tmov.u32 \t%r(1+i*1), 0;\n"
	for _, c := range []struct {
		in   string
		line int
		err  error
	}{
		{"a\n\tfor.size.x i in range(0, 2, 1):\n" + body, 2, ErrBadHeader},
		{"\tfor.size.0 i in range(0, 2, 1):\n" + body, 1, ErrBadHeader},
		{"\tfor.size.1 I in range(0, 2, 1):\n" + body, 1, ErrBadHeader},
		{"\tfor.size.1 i in range(0, 2, 1)\n" + body, 1, ErrBadHeader},
		{"\tfor i in range(0, 2, 1):\n" + body, 1, ErrBadHeader},
		{"\tfor.size.1 i of range(0, 2, 1):\n" + body, 1, ErrBadHeader},
		{"\tfor.size.2 i in range(0, 2, 1):\n\t\tfor.size.1 i in range(0, 2, 1):\n\t" + body, 2, ErrBadHeader},
		{"\tfor.size.2 i in range(0, 2, 1):\n" + body, 1, ErrShortBody},
		{"\tfor.size.2 i in range(0, 2, 1):\n" + body + "\tnext;\n", 1, ErrShortBody},
		{"\tfor.size.1 i in range(0, 2, 1):\n\t\tmov.u32 \t%r(1+i*1), 0;", 2, ErrShortBody},
		{"x\ny\n\tfor.size.1 i in range(0, 2, 1):\n\t\tmov.u32 \t%r(1+j*1), 0;\n", 4, ErrUnknownVar},
		{"\tfor.size.2 j in range(0, 2, 1):\n\t\tfor.size.1 i in range(0, 2, 1):\n\t\t\tadd \t%r(1+k*2);\n", 3, ErrUnknownVar},
		{"\tfor.size.1 i in range(0, 2, 0):\n" + body, 1, ErrBadRange},
		{"\tfor.size.1 i in range(5, 2, 1):\n" + body, 1, ErrBadRange},
		{"\tfor.size.1 i in range(0, 2):\n" + body, 1, ErrBadRange},
		{"\tfor.size.1 i in range(0, n, 1):\n" + body, 1, ErrBadRange},
		{"\tfor.size.1 i in range(0, 2, 1):\n\t\tmov.u32 \t%r(1+i), 0;\n", 2, ErrBadExpr},
		{"\tfor.size.1 i in range(0, 2, 1):\n\t\tmov.u32 \t%r(1+i*1, 0;\n", 2, ErrBadExpr},
		{"\tfor.size.1 i in range(0, 2, 1):\n\t\tmov.u32 \t%r1), 0;\n", 2, ErrBadExpr},
		{"\tfor.size.1 i in range(0, 2, 1):\n\t\tmov.u32 \t%r(0-i*1), 0;\n", 2, ErrBadExpr},
		{"\tfor.size.1 i in range(0, 999999999999999999, 1):\n" + body, 1, ErrTooLarge},
		{"\tfor.size.1 i in range(0, 20, 1):\n\t\tadd \t(999999999999999999+i*999999999999999999);\n", 2, ErrBadExpr},
	} {
		_, err := Unroll(c.in)
		var le *LineError
		if !errors.As(err, &le) || le.Line != c.line || !errors.Is(err, c.err) {
			t.Errorf("Unroll(%q): %v; want line %d, %v", c.in, err, c.line, c.err)
			continue
		}
		if !strings.HasPrefix(err.Error(), fmt.Sprintf("rollptx: line %d: ", c.line)) {
			t.Errorf("error text %q", err)
		}
	}
}

// randomBlock makes a random straight-line PTX run holding unrolled loops,
// nested ones included, with random noise between them.
func randomBlock(rng *rand.Rand) string {
	var b strings.Builder
	ops := []string{"add.s32", "ld.shared.f32", "st.global.f32", "fma.rn.f32", "mov.u32"}
	for range 1 + rng.IntN(4) {
		switch rng.IntN(3) {
		case 0: // noise
			fmt.Fprintf(&b, "\t%s \t%%r%d, %%r%d, %d;\n", ops[rng.IntN(len(ops))], rng.IntN(50), rng.IntN(50), rng.IntN(9)-4)
		case 1: // label
			fmt.Fprintf(&b, "$L__BB0_%d:\n", rng.IntN(9))
		default: // a nest of up to 3 levels
			levels := 1 + rng.IntN(3)
			counts := make([]int, levels)
			for l := range counts {
				counts[l] = 2 + rng.IntN(5)
			}
			n := 1 + rng.IntN(4)
			kinds := 0 // statements only
			if rng.IntN(2) == 0 {
				kinds = rng.IntN(7) // also labels, branches, blank lines, comments
				n += rng.IntN(4)
			}
			type opnd struct {
				base, stride []int
				geo          bool // the innermost index moves it 2, 4, 8, ... (a table)
			}
			body := make([][3]opnd, n)
			for s := range body {
				for o := range 3 {
					body[s][o].base = []int{rng.IntN(100) - 20}
					for range levels {
						body[s][o].stride = append(body[s][o].stride, rng.IntN(9)-3)
					}
				}
				body[s][2].geo = rng.IntN(4) == 0
			}
			var walk func(l int, idx []int)
			walk = func(l int, idx []int) {
				if l < 0 {
					for s, st := range body {
						v := [3]int{}
						for o := range 3 {
							v[o] = st[o].base[0]
							for k, i := range idx {
								if k == 0 && st[o].geo {
									v[o] += 1<<(i+1) - 2
									continue
								}
								v[o] += st[o].stride[k] * i
							}
						}
						reg := max(v[0], 0)
						k := s % 3
						if kinds > 0 {
							k = (s + kinds) % 7
						}
						switch k {
						case 0:
							fmt.Fprintf(&b, "\tld.global.f32 \t%%f%d, [%%rd%d+%d];\n", reg, max(v[1], 0), v[2])
						case 1:
							fmt.Fprintf(&b, "\tadd.s32 \t%%r%d, %%r%d, %d;\n", reg, max(v[1], 0), v[2])
						case 2:
							fmt.Fprintf(&b, "\tst.shared.v2.f32 \t[%%r%d], {%%f%d, %%f%d};\n", reg, max(v[1], 0), max(v[2], 0))
						case 3: // a label, at the start of the line
							fmt.Fprintf(&b, "$L__BB0_%d:\n", reg)
						case 4: // a branch
							fmt.Fprintf(&b, "\t@%%p%d bra \t$L__BB0_%d;\n", max(v[1], 0), reg)
						case 5:
							b.WriteString("\n")
						default:
							b.WriteString("\t// begin inline asm\n")
						}
					}
					return
				}
				for i := range counts[l] {
					walk(l-1, append(idx, i))
				}
			}
			walk(levels-1, nil)
		}
	}
	return strings.ReplaceAll(b.String(), "+0]", "]")
}

func TestRoundTripRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	folded, deep, blocks, tables := 0, 0, 0, 0
	for range 2000 {
		in := randomBlock(rng)
		out, st := RollStats(in)
		back, err := Unroll(out)
		if err != nil || back != in {
			t.Fatalf("round trip failed (%v):\n%s\nrolled:\n%s", err, in, out)
		}
		if st.Loops > 0 {
			folded++
		}
		if st.MaxDepth > 1 {
			deep++
		}
		if strings.Contains(out, "$L__BB0_(") {
			blocks++ // labels or branches in a loop
		}
		if strings.Contains(out, "}[i]") {
			tables++
		}
	}
	if folded < 1000 || deep < 200 || blocks < 100 || tables < 50 {
		t.Errorf("%d of 2000 blocks fold, %d nest, %d fold labels or branches, %d have tables", folded, deep, blocks, tables)
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add(figure8())
	f.Add("\tld.u32 \t%r1, [%rd1];\n\tld.u32 \t%r2, [%rd1+4];\n\tld.u32 \t%r3, [%rd1+8];\n\tld.u32 \t%r4, [%rd1+12];\n")
	f.Add("\tadd.s32 \t%r1, %r2, -1;\n\tadd.s32 \t%r2, %r3, -2;\n\tadd.s32 \t%r3, %r4, -3;\n")
	f.Add("\tst.u32 \t[%rd1+0], %r1;\n\tst.u32 \t[%rd1+-0], %r1;\n\tst.u32 \t[%rd1+-4], %r1;\n")
	f.Add("\tmov.u32 \t%r999999999999999999, 999999999999999999;\n\tmov.u32 \t%r1, -999999999999999999;\n")
	f.Add("for.size.1 i in range(0, 2, 1):\n\tx;\n")
	f.Add("\tcall.uni (retval0), f, (param0);\n\tcall.uni (retval0), f, (param0);\n")
	f.Add("x\r\n\ty;\n\ty;")
	f.Add(treeReduction(6))
	f.Add("for.size.3 i in range(0, 3, 1):\n\t$L__BB0_(1+i*2):\n\n\t\tmov.u32 \t%r(1+i*1), {4, 2, 1}[i];\n")
	f.Add("\tst.u32 \t[%rd1+{1, 2}[i]], %r1;\n\tld.v2.u32 \t{%r1, %r2}, [%rd1];\n")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(randomBlock(rng))
	}
	if files, err := loadCorpusQuiet(); err == nil {
		for i, c := range files {
			if i%10 == 0 {
				f.Add(c.ptx[:min(len(c.ptx), 4000)])
			}
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, st := RollStats(in)
		if st.OutBytes > st.InBytes {
			t.Fatalf("Roll made the text longer: %d > %d", st.OutBytes, st.InBytes)
		}
		if hasHeaderLike(in) {
			if out != in {
				t.Fatalf("Roll changed text with a header-like line")
			}
		} else {
			back, err := Unroll(out)
			if err != nil {
				t.Fatalf("Unroll(Roll(x)): %v\nrolled:\n%q", err, out)
			}
			if back != in {
				t.Fatalf("round trip differs\nin:     %q\nrolled: %q\nback:   %q", in, out, back)
			}
		}
		unroll(in, 1<<20) // must not panic
	})
}

func hasHeaderLike(s string) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if isHeaderLike(strings.TrimLeft(l, " \t")) {
			return true
		}
	}
	return false
}

func TestStatsReduction(t *testing.T) {
	t.Parallel()
	_, st := RollStats(figure8())
	if st.Reduction() <= 0.5 || st.LineReduction() <= 0.7 || st.Loops != 1 || st.MaxDepth != 1 {
		t.Errorf("stats %+v, reduction %.2f, lines %.2f", st, st.Reduction(), st.LineReduction())
	}
	// a header-like line: nothing folds, every statement is counted
	in := "\tfor.x \t%r1;\n" + figure8()
	if out, st := RollStats(in); out != in || st.InStatements != 46 || st.OutStatements != 46 || st.Loops != 0 {
		t.Errorf("header-like input: stats %+v", st)
	}
	var zero Stats
	if zero.Reduction() != 0 || zero.LineReduction() != 0 {
		t.Error("zero stats")
	}
}

// predictedLen rolls ptx and returns the length the cost model predicts for
// the output: the dynamic programming is only as good as that prediction.
func predictedLen(ptx string) (string, int) {
	r := getRoller()
	defer r.release()
	out := r.roll(ptx)
	if out == ptx {
		return out, len(ptx)
	}
	n := 0
	for _, u := range r.items {
		if u.loop >= 0 {
			n += int(u.cost)
			continue
		}
		li := r.lines[u.line]
		n += int(li.end - li.start)
		if int(li.end) < len(ptx) {
			n++
		}
	}
	return out, n
}

func TestCostModel(t *testing.T) {
	t.Parallel()
	check := func(name, in string) {
		out, n := predictedLen(in)
		if n != len(out) {
			t.Errorf("%s: predicted %d bytes, rendered %d", name, n, len(out))
		}
	}
	for _, f := range loadCorpus(t) {
		check(f.name, f.ptx)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 500 {
		check(fmt.Sprint("random ", i), randomBlock(rng))
	}
	check("figure 8", figure8())
}
