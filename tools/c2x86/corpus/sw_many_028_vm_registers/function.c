struct insn {
    unsigned char op;
    unsigned char a;
    unsigned char b;
    int imm;
};

long run_reg_vm(const struct insn *prog, int n, long *regs)
{
    int pc = 0;
    long steps = 0;
    while (pc >= 0 && pc < n && steps < 10000) {
        const struct insn *in = &prog[pc];
        steps++;
        switch (in->op) {
        case 0: /* movi */
            regs[in->a & 3] = in->imm;
            pc++;
            break;
        case 1: /* add */
            regs[in->a & 3] += regs[in->b & 3];
            pc++;
            break;
        case 2: /* sub */
            regs[in->a & 3] -= regs[in->b & 3];
            pc++;
            break;
        case 3: /* mul */
            regs[in->a & 3] *= regs[in->b & 3];
            pc++;
            break;
        case 4: /* dec */
            regs[in->a & 3]--;
            pc++;
            break;
        case 5: /* jnz */
            pc = regs[in->a & 3] != 0 ? in->imm : pc + 1;
            break;
        case 6: /* halt */
            return steps;
        default:
            return -1;
        }
    }
    return steps;
}
