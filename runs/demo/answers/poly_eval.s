# poly_eval: Horner's rule, the same operations in the same order as the C
	.text
	.globl	poly_eval
	.type	poly_eval, @function
poly_eval:
	movapd	%xmm0, %xmm1		# x
	mulsd	.LC0(%rip), %xmm0	# 3e-5 * x
	subsd	.LC1(%rip), %xmm0	# - 1.25
	mulsd	%xmm1, %xmm0		# * x
	addsd	.LC2(%rip), %xmm0	# + 0.5
	mulsd	%xmm1, %xmm0		# * x
	addsd	.LC3(%rip), %xmm0	# + 2.75
	ret
	.size	poly_eval, .-poly_eval
	.section	.rodata
	.align	8
.LC0:	.double	3e-5
.LC1:	.double	1.25
.LC2:	.double	0.5
.LC3:	.double	2.75
	.section	.note.GNU-stack,"",@progbits
