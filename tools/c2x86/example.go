package c2x86

import (
	"errors"
	"strings"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// exampleRight is GCC's -O0 -fno-jump-tables assembly of the corpus item
// int_001_gcd_unsigned (Euclid's gcd on unsigned ints).
const exampleRight = `	.text
	.globl	gcd_u
	.type	gcd_u, @function
gcd_u:
	pushq	%rbp
	movq	%rsp, %rbp
	movl	%edi, -20(%rbp)
	movl	%esi, -24(%rbp)
	jmp	.L2
.L3:
	movl	-20(%rbp), %eax
	movl	$0, %edx
	divl	-24(%rbp)
	movl	%edx, -4(%rbp)
	movl	-24(%rbp), %eax
	movl	%eax, -20(%rbp)
	movl	-4(%rbp), %eax
	movl	%eax, -24(%rbp)
.L2:
	cmpl	$0, -24(%rbp)
	jne	.L3
	movl	-20(%rbp), %eax
	popq	%rbp
	ret
	.size	gcd_u, .-gcd_u
	.section	.note.GNU-stack,"",@progbits
`

// example is the lane's worked example: gcd_u answered right, returning
// b (always 0 at the end) instead of a (wrong output), and as bytes of
// machine code smuggled in with .byte (suspect); and a synthesised task.
func example() (kit.Example, error) {
	// The same, returning b (0 once the loop ends) instead of a.
	wrong := strings.Replace(exampleRight, "\tjne\t.L3\n\tmovl\t-20(%rbp), %eax\n", "\tjne\t.L3\n\tmovl\t-24(%rbp), %eax\n", 1)
	if wrong == exampleRight {
		return kit.Example{}, errors.New("c2x86 example: the return of gcd_u not found")
	}
	cheat := "\t.text\n\t.globl\tgcd_u\ngcd_u:\n\t.byte 0x89, 0xf8, 0xc3\n"
	synth := "These tasks mix unsigned division with loops.\n\n### TASK 1\ncategory: int_arith\nfunction: digit_product_u\n" +
		"description: product of the decimal digits of an unsigned int\n" +
		"```c function.c\nunsigned digit_product_u(unsigned x)\n{\n    unsigned p = 1;\n    do {\n        p *= x % 10;\n        x /= 10;\n    } while (x != 0);\n    return p;\n}\n```\n" +
		"```c driver.c\n#include <stdio.h>\n\nunsigned digit_product_u(unsigned x);\n\nint main(void)\n{\n    unsigned v[] = {0, 7, 39, 1234, 4294967295u};\n" +
		"    for (int i = 0; i < 5; i++)\n        printf(\"%u -> %u\\n\", v[i], digit_product_u(v[i]));\n    return 0;\n}\n```\n"
	return kit.Example{
		Tasks:   kit.Tasks{Corpus: "builtin", Categories: []string{CatIntArith}, Seed: 1, SamplesPerTask: 1},
		TaskKey: "r0/int_001_gcd_unsigned#0",
		Right:   "```asm\n" + exampleRight + "```", Wrong: "```asm\n" + wrong + "```", WrongClass: tools.ClassWrongOutput,
		Cheat: "```asm\n" + cheat + "```", Synth: synth, SynthCategory: CatIntArith,
	}, nil
}
