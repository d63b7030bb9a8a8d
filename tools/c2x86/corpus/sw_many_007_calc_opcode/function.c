int calc_opcode(int op, int a, int b, int *err)
{
    *err = 0;
    switch (op) {
    case 0:
        return a + b;
    case 1:
        return a - b;
    case 2:
        return a * b;
    case 3:
        if (b == 0 || (a == -2147483647 - 1 && b == -1)) {
            *err = 1;
            return 0;
        }
        return a / b;
    case 4:
        if (b == 0 || b == -1) {
            *err = b == 0;
            return 0;
        }
        return a % b;
    case 5:
        return a & b;
    case 6:
        return a | b;
    case 7:
        return a ^ b;
    default:
        *err = 2;
        return 0;
    }
}
