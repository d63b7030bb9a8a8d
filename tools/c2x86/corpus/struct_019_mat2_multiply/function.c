struct mat2 {
    long long a, b, c, d;
};

static struct mat2 mul(struct mat2 x, struct mat2 y)
{
    struct mat2 r;
    r.a = x.a * y.a + x.b * y.c;
    r.b = x.a * y.b + x.b * y.d;
    r.c = x.c * y.a + x.d * y.c;
    r.d = x.c * y.b + x.d * y.d;
    return r;
}

struct mat2 mat2_pow(struct mat2 m, unsigned e)
{
    struct mat2 r = {1, 0, 0, 1};
    while (e) {
        if (e & 1u)
            r = mul(r, m);
        e >>= 1;
        if (e)
            m = mul(m, m);
    }
    return r;
}
