// Package rollptx converts PTX to Rolled-PTX and back.
//
// Rolled-PTX is the loop-rerolled form of PTX from PtxDec (section III-D): a
// run of lines that repeats with numbers varying affinely (the signature of a
// `#pragma unroll` loop) is folded into a `for` statement. [Roll] folds,
// [Unroll] expands, and Unroll(Roll(x)) == x byte for byte for every plain
// PTX text x (see "Round trip" below).
//
// # Format
//
// A loop is a header line followed by its body:
//
//	<W>for.size.N v in range(start, limit, step):
//	<W>\t<body line 1>
//	...
//	<W>\t<body line N>
//
// W is the loop's indentation: the white space that all the (non-blank)
// lines of the body begin with, a tab when the body is statements only, and
// nothing when it holds labels, which nvcc writes at the start of the line.
// Every body line is written with one more tab after W; a blank line stays
// blank. N counts the body lines, blank lines and the lines of nested loops
// included, so a reader knows where a body ends without looking at the
// indentation (Unroll checks both). v is a variable, [a-z][a-z0-9_]*; range
// is Python's: v takes start, start+step, ... while below limit (above it for
// a negative step). Roll always writes range(0, K, 1) with K >= 2 iterations,
// names the variable of the innermost loops i and the enclosing ones j, k, l,
// ...
//
// Inside a body a number that varies with the iteration is a VarExpr: a
// signed integer followed by one term per loop variable, in parentheses:
// (882+i*8), (-64+i*16), (3+i*4+j*32), (100-i*2). Where it stands:
//
//	%f(882+i*8)          register: the prefix %f then the number 882+8i
//	(16+i*16)            immediate operand
//	[%rd38+(-64+i*16)]   address offset: printed as PTX does, [%rd38+-64],
//	                     [%rd38+16], and [%rd38] when it is 0
//	{%f(1+i*4), %f(2+i*4)}  vector groups are registers like any other
//	$L__BB0_(4+i*2)      the number that ends a label ($-name), where it is
//	                     defined ($L__BB0_(4+i*2):) and where it is a
//	                     branch target (@%p1 bra $L__BB0_(4+i*2);)
//
// An immediate or an address offset that does not move by equal steps can
// instead be a table: its values in braces, then the loop variable in
// brackets, {256, 128, 64, 32, 16, 8}[i] (the value at index i, as in
// Python: i is the variable's value), an offset written [%r3+{256, 128,
// 64}[i]] and printed as PTX does.
//
// Lines that can be folded contain no parentheses and no "}[", so inside a
// body every "(" starts a VarExpr, "+(" after an address base is an offset,
// and "{" followed by a number and closed by "}[" starts a table. (PtxDec's
// printed register form, %f(%(882+i*8), is an OCR artefact; this package uses
// %f(882+i*8).) Lines outside loops are plain PTX, copied unchanged.
//
// Example: PtxDec's Figure 8, a copy loop nvcc unrolled 8 times,
//
//	$L__BB1_11:
//		ld.local.v4.f32 	{%f882, %f883, %f884, %f885}, [%rd37];
//		st.global.f32 	[%rd38+-64], %f882;
//		st.global.f32 	[%rd38+-60], %f883;
//		st.global.f32 	[%rd38+-56], %f884;
//		st.global.f32 	[%rd38+-52], %f885;
//		ld.local.v4.f32 	{%f886, %f887, %f888, %f889}, [%rd37+16];
//		st.global.f32 	[%rd38+-48], %f886;
//		... (8 iterations)
//		add.s64 	%rd38, %rd38, 128;
//
// rolls to
//
//	$L__BB1_11:
//		for.size.5 i in range(0, 8, 1):
//			ld.local.v4.f32 	{%f(882+i*4), %f(883+i*4), %f(884+i*4), %f(885+i*4)}, [%rd37+(0+i*16)];
//			st.global.f32 	[%rd38+(-64+i*16)], %f(882+i*4);
//			st.global.f32 	[%rd38+(-60+i*16)], %f(883+i*4);
//			st.global.f32 	[%rd38+(-56+i*16)], %f(884+i*4);
//			st.global.f32 	[%rd38+(-52+i*16)], %f(885+i*4);
//		add.s64 	%rd38, %rd38, 128;
//
// A loop whose body holds an if unrolls into a run of basic blocks: a
// branch, the block, the label the branch skips to. Those fold too, labels
// and branch targets numbered by VarExprs, with the loop at the labels'
// indentation (none) and blank lines kept (the unrolled
// `for (j = 8; j < 32; j += 8) if (y + j < h) tile[..] = in[..];` of a
// transpose):
//
//	for.size.12 i in range(0, 3, 1):
//			add.s32 	%r(12+i*1), %r10, (8+i*8);
//			setp.ge.s32 	%p(17+i*3), %r(12+i*1), %r15;
//			or.pred  	%p(18+i*3), %p13, %p(17+i*3);
//			@%p(18+i*3) bra 	$L__BB0_(12+i*2);
//
//			ld.shared.f32 	%f(6+i*1), [%r11+(32+i*32)];
//			...
//			st.global.f32 	[%rd(16+i*2)], %f(6+i*1);
//
//		$L__BB0_(12+i*2):
//
// A shared-memory tree reduction (for (s = 256; s > 0; s >>= 1)), six
// blocks whose thresholds and offsets halve, is one loop with two tables:
//
//	for.size.10 i in range(0, 6, 1):
//			setp.gt.u32 	%p(4+i*1), %r1, {63, 31, 15, 7, 3, 1}[i];
//			@%p(4+i*1) bra 	$L__BB0_(8+i*2);
//
//			ld.shared.f32 	%f(10+i*3), [%r3];
//			ld.shared.f32 	%f(11+i*3), [%r3+{256, 128, 64, 32, 16, 8}[i]];
//			add.f32 	%f(12+i*3), %f(11+i*3), %f(10+i*3);
//			st.shared.f32 	[%r3], %f(12+i*3);
//
//		$L__BB0_(8+i*2):
//			bar.sync 	0;
//
// Nested loops come from rolling the rolled text again: a run of loops whose
// numbers move with an outer iteration becomes
//
//	for.size.3 j in range(0, 4, 1):
//		for.size.2 i in range(0, 8, 1):
//			ld.global.f32 	%f(1+i*2+j*16), [%rd4+(0+i*4+j*128)];
//			st.shared.f32 	[%r3+(0+i*4+j*64)], %f(1+i*2+j*16);
//
// # What folds
//
// Any line can be part of a loop body: instructions, control transfers
// (bra, ret, ...), labels, comments (nvcc's "// begin inline asm" around
// inline PTX), directives, braces and blank lines, unless it holds a
// parenthesis or a control character or is the text's last line without a
// newline; such lines (call sequences, function headers) split the text into
// runs. Within a run, two lines correspond when they are equal except for
// numbers in four places: register numbers (%r12), decimal immediates (-1,
// 32), address offsets ([%rd4+16], [%rd4] counting as offset 0) and the
// number that ends a $-name ($L__BB0_12). A number folds only if it is
// written the way this package would print it (no leading zeros, no "+0"),
// which makes the round trip exact. Numbers in comments are text.
//
// A repeat of a body of N lines K >= 2 times folds when every number moves
// by the same step from one iteration to the next; numbers that do not move
// stay literal. Since any two iterations pass that test, a repeat of exactly
// two folds only if, in addition, the register numbers of each prefix (%r,
// %rd, %f, ...) that move all move by one step, as they do when nvcc unrolls
// a loop; the body holds two instructions or more; its lines do not repeat
// within it; and where the lines repeat a third time, before or after, the
// numbers other than registers go on by the same steps (two of the six steps
// of a tree reduction, whose offsets halve, are no loop of two).
//
// With K >= 3 iterations (at most [MaxTable]) and a body of two instructions
// or more, immediates and offsets that do not move by equal steps become
// tables, provided their values move in one direction by steps that are
// powers of two and grow or shrink by a constant ratio: the strides of tree
// reductions, scans, shuffles and butterflies (256 128 64 ..., 1 3 7 15 ...,
// 16 8 4 2 1). Values that move by equal steps for three in a row are a
// nest, which a later pass folds; lists of unrelated constants (round
// constants, a filter's coefficients in the order the compiler scheduled
// their loads, a row of mov's) are no loop and stay as they are. Registers
// and labels never become tables: registers that rotate through the rounds
// of a hash would read as noise.
//
// A fold is made only when it is shorter than the lines it replaces.
//
// Per run, Roll chooses its folds by dynamic programming over the run (bodies
// of at most [MaxBody] lines): the set of folds that makes the run shortest.
// It then rolls its own output again, so that repeated loops fold into nested
// ones (at most [MaxDepth] levels). The shortest flat choice can hide a nest
// (one loop over a whole 3-D unrolled block instead of rows that nest): where
// the body of a loop of the first pass holds a fold that would pay on its
// own, the run is rolled a second way, folding at each position the nearest
// repeat that pays (PtxDec's order, innermost loops first), and the shorter
// result is kept.
// Of equally short results, the second strategy prefers loops that start
// early; a loop may still start mid-iteration (a rotation of the source
// loop's body) when that is shorter.
//
// # Round trip
//
// Unroll(Roll(x)) == x for every x in which no line, after its leading white
// space, begins with "for" followed by ".", a blank, ":", "(" or the line's
// end (for is not a PTX opcode; Unroll reads such a line as a loop header).
// Roll returns such an x unchanged. Unroll rejects
// malformed Rolled-PTX with a [*LineError] that names the line and wraps one of
// [ErrBadHeader], [ErrShortBody], [ErrUnknownVar], [ErrBadRange], [ErrBadExpr]
// or [ErrTooLarge].
package rollptx
