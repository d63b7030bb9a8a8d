#include <stdio.h>

struct insn {
    unsigned char op;
    unsigned char a;
    unsigned char b;
    int imm;
};

long run_reg_vm(const struct insn *prog, int n, long *regs);

int main(void)
{
    /* factorial of r1 into r0 */
    struct insn fact[] = {{0, 0, 0, 1}, {0, 1, 0, 10}, {3, 0, 1, 0}, {4, 1, 0, 0}, {5, 1, 0, 2}, {6, 0, 0, 0}};
    /* r0 = sum 1..r1 */
    struct insn sum[] = {{0, 0, 0, 0}, {0, 1, 0, 100}, {1, 0, 1, 0}, {4, 1, 0, 0}, {5, 1, 0, 2}, {6, 0, 0, 0}};
    struct insn bad[] = {{0, 2, 0, 7}, {9, 0, 0, 0}};
    struct insn loop[] = {{0, 3, 0, 1}, {5, 3, 0, 1}};
    long r[4] = {0, 0, 0, 0};
    long s = run_reg_vm(fact, 6, r);
    printf("%ld: %ld %ld %ld %ld\n", s, r[0], r[1], r[2], r[3]);
    s = run_reg_vm(sum, 6, r);
    printf("%ld: %ld %ld %ld %ld\n", s, r[0], r[1], r[2], r[3]);
    s = run_reg_vm(bad, 2, r);
    printf("%ld: %ld %ld %ld %ld\n", s, r[0], r[1], r[2], r[3]);
    s = run_reg_vm(loop, 2, r);
    printf("%ld: %ld %ld %ld %ld\n", s, r[0], r[1], r[2], r[3]);
    return 0;
}
