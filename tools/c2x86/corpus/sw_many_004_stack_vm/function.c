long run_stack_vm(const int *code, int len)
{
    long stack[32];
    int sp = 0;
    int pc = 0;
    int steps = 0;
    while (pc < len && steps++ < 1000) {
        int op = code[pc++];
        switch (op) {
        case 0: /* halt */
            return sp > 0 ? stack[sp - 1] : 0;
        case 1: /* push imm */
            if (sp >= 32 || pc >= len)
                return -1;
            stack[sp++] = code[pc++];
            break;
        case 2: /* add */
            if (sp < 2) return -1;
            stack[sp - 2] += stack[sp - 1];
            sp--;
            break;
        case 3: /* sub */
            if (sp < 2) return -1;
            stack[sp - 2] -= stack[sp - 1];
            sp--;
            break;
        case 4: /* mul */
            if (sp < 2) return -1;
            stack[sp - 2] *= stack[sp - 1];
            sp--;
            break;
        case 5: /* dup */
            if (sp < 1 || sp >= 32) return -1;
            stack[sp] = stack[sp - 1];
            sp++;
            break;
        case 6: { /* swap */
            if (sp < 2) return -1;
            long t = stack[sp - 1];
            stack[sp - 1] = stack[sp - 2];
            stack[sp - 2] = t;
            break;
        }
        case 7: /* jz target: pops */
            if (sp < 1 || pc >= len) return -1;
            if (stack[--sp] == 0)
                pc = code[pc];
            else
                pc++;
            break;
        default:
            return -2;
        }
    }
    return sp > 0 ? stack[sp - 1] : 0;
}
