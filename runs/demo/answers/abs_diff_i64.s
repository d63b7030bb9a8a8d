# abs_diff_i64: subtract the smaller from the larger
	.text
	.globl	abs_diff_i64
	.type	abs_diff_i64, @function
abs_diff_i64:
	movq	%rdi, %rax
	cmpq	%rsi, %rdi
	jge	.Lge			# a >= b, signed
	movq	%rsi, %rax
	subq	%rdi, %rax		# b - a
	ret
.Lge:
	subq	%rsi, %rax		# a - b
	ret
	.size	abs_diff_i64, .-abs_diff_i64
	.section	.note.GNU-stack,"",@progbits
