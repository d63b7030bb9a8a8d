struct cpx {
    double re;
    double im;
};

struct cpx cmul(struct cpx a, struct cpx b)
{
    struct cpx r;
    r.re = a.re * b.re - a.im * b.im;
    r.im = a.re * b.im + a.im * b.re;
    return r;
}
