# gcd_u: Euclid's algorithm on unsigned ints, a and b kept in registers
	.text
	.globl	gcd_u
	.type	gcd_u, @function
gcd_u:
	movl	%edi, %eax		# a
	testl	%esi, %esi
	je	.Ldone
.Lloop:
	xorl	%edx, %edx		# unsigned: zero the high half
	divl	%esi			# edx = a % b
	movl	%esi, %eax		# a = b
	movl	%edx, %esi		# b = t
	testl	%esi, %esi
	jne	.Lloop
.Ldone:
	ret
	.size	gcd_u, .-gcd_u
	.section	.note.GNU-stack,"",@progbits
