int avg3(int a, int b, int c)
{
    int qa = a / 3, qb = b / 3, qc = c / 3;
    int ra = a % 3, rb = b % 3, rc = c % 3;
    int q = qa + qb + qc;
    int r = ra + rb + rc;
    q += r / 3;
    r %= 3;
    if (q > 0 && r < 0)
        q -= 1;
    else if (q < 0 && r > 0)
        q += 1;
    return q;
}
