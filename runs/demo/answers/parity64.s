# parity64: fold the halves with xor down to a nibble, then look it up in 0x6996
	.text
	.globl	parity64
	.type	parity64, @function
parity64:
	movq	%rdi, %rax
	shrq	$32, %rax
	xorq	%rax, %rdi
	movq	%rdi, %rax
	shrq	$16, %rax
	xorq	%rax, %rdi
	movq	%rdi, %rax
	shrq	$8, %rax
	xorq	%rax, %rdi
	movq	%rdi, %rax
	shrq	$4, %rax
	xorq	%rax, %rdi
	movl	%edi, %ecx
	andl	$15, %ecx
	movl	$0x6996, %eax
	shrl	%cl, %eax
	andl	$1, %eax
	ret
	.size	parity64, .-parity64
	.section	.note.GNU-stack,"",@progbits
