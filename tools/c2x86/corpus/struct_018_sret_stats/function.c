struct stats {
    long sum;
    int min;
    int max;
    int count;
    int negatives;
    double mean;
    long sum_sq;
};

struct stats compute_stats(const int *v, int n)
{
    struct stats s = {0, 0, 0, 0, 0, 0.0, 0};
    for (int i = 0; i < n; i++) {
        if (i == 0 || v[i] < s.min) s.min = v[i];
        if (i == 0 || v[i] > s.max) s.max = v[i];
        s.sum += v[i];
        s.sum_sq += (long)v[i] * v[i];
        if (v[i] < 0)
            s.negatives++;
        s.count++;
    }
    if (n > 0)
        s.mean = (double)s.sum / n;
    return s;
}
