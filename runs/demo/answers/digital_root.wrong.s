# digital_root: 1 + (n - 1) % 9 for n > 0
	.text
	.globl	digital_root
	.type	digital_root, @function
digital_root:
	movl	$-1, %eax
	testl	%edi, %edi
	js	.Lret			# n < 0
	movl	$0, %eax
	je	.Lret			# n == 0
	leal	-1(%rdi), %eax
	cltd
	idivl	$9
	leal	1(%rdx), %eax
.Lret:
	ret
	.size	digital_root, .-digital_root
	.section	.note.GNU-stack,"",@progbits
