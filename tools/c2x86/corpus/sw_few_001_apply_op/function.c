long apply_op(char op, long a, long b)
{
    switch (op) {
    case '+':
        return a + b;
    case '-':
        return a - b;
    case '*':
        return a * b;
    case '/':
        if (b == 0)
            return 0;
        return a / b;
    default:
        return -1;
    }
}
