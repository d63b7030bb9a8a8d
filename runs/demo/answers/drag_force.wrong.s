# drag_force: 0.5 * rho * v * v * cd * area + 2.5e-3 * v, left to right
	.text
	.globl	drag_force
	.type	drag_force, @function
drag_force:
	movsd	.LC0(%rip), %xmm2	# 0.5
	mulsd	.LC1(%rip), %xmm2	# * rho
	mulsd	%xmm0, %xmm2		# * v
	mulsd	%xmm0, %xmm2		# * v
	mulsd	.LC2(%rip), %xmm2	# * cd
	mulsd	%xmm1, %xmm2		# * area
	mulsd	.LC3(%rip), %xmm0	# 2.5e-3 * v
	addsd	%xmm2, %xmm0
	ret
	.size	drag_force, .-drag_force
	.section	.rodata
	.align	8
.LC0:	.double	0.5
.LC1:	.float	1.225
	.align	8
.LC2:	.double	0.47
.LC3:	.double	2.5e-3
	.section	.note.GNU-stack,"",@progbits
