# digital_root: 1 + (n - 1) % 9 for n > 0; idiv takes its divisor in a register
	.text
	.globl	digital_root
	.type	digital_root, @function
digital_root:
	movl	$-1, %eax
	testl	%edi, %edi
	jle	.Lret			# n <= 0
	leal	-1(%rdi), %eax
	movl	$9, %ecx
	cltd
	idivl	%ecx
	leal	1(%rdx), %eax
.Lret:
	ret
	.size	digital_root, .-digital_root
	.section	.note.GNU-stack,"",@progbits
