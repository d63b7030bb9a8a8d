#define MODP 1000000007ULL

static void matmul(const unsigned long long *a, const unsigned long long *b, unsigned long long *c, int n)
{
    unsigned long long tmp[36];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            unsigned long long s = 0;
            for (int k = 0; k < n; k++)
                s = (s + a[i * n + k] * b[k * n + j]) % MODP;
            tmp[i * n + j] = s;
        }
    for (int i = 0; i < n * n; i++)
        c[i] = tmp[i];
}

unsigned long long count_walks_mod(const int *adj, int n, unsigned long long k, int from, int to)
{
    unsigned long long base[36], result[36];
    if (n <= 0 || n > 6)
        return 0;
    for (int i = 0; i < n * n; i++) {
        base[i] = (unsigned long long)(adj[i] != 0);
        result[i] = (i % (n + 1) == 0);
    }
    while (k) {
        if (k & 1)
            matmul(result, base, result, n);
        matmul(base, base, base, n);
        k >>= 1;
    }
    return result[from * n + to];
}
