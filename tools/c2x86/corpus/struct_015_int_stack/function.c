struct istack {
    int top;
    long items[16];
};

static int push(struct istack *s, long v)
{
    if (s->top >= 16)
        return 0;
    s->items[s->top++] = v;
    return 1;
}

static int pop(struct istack *s, long *v)
{
    if (s->top <= 0)
        return 0;
    *v = s->items[--s->top];
    return 1;
}

int stack_eval_rpn(const char *expr, long *result)
{
    struct istack st;
    st.top = 0;
    for (; *expr; expr++) {
        char c = *expr;
        if (c >= '0' && c <= '9') {
            if (!push(&st, c - '0'))
                return -1;
        } else if (c == '+' || c == '-' || c == '*') {
            long a, b;
            if (!pop(&st, &b) || !pop(&st, &a))
                return -2;
            long r = c == '+' ? a + b : c == '-' ? a - b : a * b;
            push(&st, r);
        } else if (c != ' ') {
            return -3;
        }
    }
    if (st.top != 1)
        return -4;
    *result = st.items[0];
    return 0;
}
