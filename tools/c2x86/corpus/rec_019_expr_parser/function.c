struct parser {
    const char *p;
    int error;
};

static long parse_expr(struct parser *ps);

static void skip_ws(struct parser *ps)
{
    while (*ps->p == ' ')
        ps->p++;
}

static long parse_primary(struct parser *ps)
{
    skip_ws(ps);
    if (*ps->p == '(') {
        ps->p++;
        long v = parse_expr(ps);
        skip_ws(ps);
        if (*ps->p != ')') {
            ps->error = 1;
            return 0;
        }
        ps->p++;
        return v;
    }
    if (*ps->p == '-') {
        ps->p++;
        return -parse_primary(ps);
    }
    if (*ps->p < '0' || *ps->p > '9') {
        ps->error = 2;
        return 0;
    }
    long v = 0;
    while (*ps->p >= '0' && *ps->p <= '9' && v < 100000000000L)
        v = v * 10 + (*ps->p++ - '0');
    return v;
}

static long parse_term(struct parser *ps)
{
    long v = parse_primary(ps);
    for (;;) {
        skip_ws(ps);
        char op = *ps->p;
        if (op != '*' && op != '/' && op != '%')
            return v;
        ps->p++;
        long r = parse_primary(ps);
        if (op == '*') {
            v *= r;
        } else if (r == 0) {
            ps->error = 3;
            return 0;
        } else {
            v = op == '/' ? v / r : v % r;
        }
    }
}

static long parse_expr(struct parser *ps)
{
    long v = parse_term(ps);
    for (;;) {
        skip_ws(ps);
        char op = *ps->p;
        if (op != '+' && op != '-')
            return v;
        ps->p++;
        long r = parse_term(ps);
        v = op == '+' ? v + r : v - r;
    }
}

int eval_expr(const char *s, long *out)
{
    struct parser ps = {s, 0};
    long v = parse_expr(&ps);
    skip_ws(&ps);
    if (ps.error == 0 && *ps.p != '\0')
        ps.error = 4;
    *out = ps.error ? 0 : v;
    return ps.error;
}
