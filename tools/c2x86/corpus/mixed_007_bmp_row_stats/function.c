struct img_stats {
    double mean;
    double variance;
    int above;
    int brightest_row;
};

int image_stats(const unsigned char *pix, int w, int h, int stride, unsigned char thr, struct img_stats *st)
{
    if (w <= 0 || h <= 0 || stride < w)
        return -1;
    double sum = 0.0, sumsq = 0.0;
    long best = -1;
    st->above = 0;
    st->brightest_row = -1;
    for (int y = 0; y < h; y++) {
        const unsigned char *row = pix + (long)y * stride;
        long rs = 0;
        for (int x = 0; x < w; x++) {
            unsigned v = row[x];
            rs += v;
            sumsq += (double)v * v;
            if (v > thr)
                st->above++;
        }
        sum += rs;
        if (rs > best) {
            best = rs;
            st->brightest_row = y;
        }
    }
    double n = (double)w * h;
    st->mean = sum / n;
    st->variance = sumsq / n - st->mean * st->mean;
    if (st->variance < 0.0)
        st->variance = 0.0;
    return 0;
}
