struct polygon {
    int n;
    int xs[8];
    int ys[8];
};

long polygon_perimeter2(const struct polygon *p, long *perimeter_l1)
{
    long area2 = 0;
    long per = 0;
    for (int i = 0; i < p->n; i++) {
        int j = (i + 1) % p->n;
        area2 += (long)p->xs[i] * p->ys[j] - (long)p->xs[j] * p->ys[i];
        long dx = p->xs[j] - p->xs[i];
        long dy = p->ys[j] - p->ys[i];
        per += (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
    }
    *perimeter_l1 = per;
    return area2;
}
