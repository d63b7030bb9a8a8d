long huffman_cost(const long *freq, int n)
{
    long w[64];
    int m = 0;
    for (int i = 0; i < n && m < 64; i++)
        if (freq[i] > 0)
            w[m++] = freq[i];
    if (m == 0)
        return 0;
    if (m == 1)
        return w[0];
    long cost = 0;
    while (m > 1) {
        int a = 0, b = 1;
        if (w[b] < w[a]) {
            a = 1;
            b = 0;
        }
        for (int i = 2; i < m; i++) {
            if (w[i] < w[a]) {
                b = a;
                a = i;
            } else if (w[i] < w[b]) {
                b = i;
            }
        }
        long merged = w[a] + w[b];
        cost += merged;
        int lo = a < b ? a : b, hi = a < b ? b : a;
        w[lo] = merged;
        w[hi] = w[m - 1];
        m--;
    }
    return cost;
}
