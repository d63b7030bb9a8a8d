int histogram(const int *v, int n, int lo, int width, int *bins, int nbins)
{
    int outside = 0;
    for (int i = 0; i < nbins; i++)
        bins[i] = 0;
    for (int i = 0; i < n; i++) {
        long off = (long)v[i] - lo;
        if (off < 0) {
            outside++;
            continue;
        }
        long b = off / width;
        if (b >= nbins) {
            outside++;
            continue;
        }
        bins[b]++;
    }
    return outside;
}
