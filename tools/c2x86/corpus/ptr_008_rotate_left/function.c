static void rev(int *a, int i, int j)
{
    while (i < j) {
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
    }
}

void rotate_array(int *a, int n, int k)
{
    if (n <= 1)
        return;
    k %= n;
    if (k < 0)
        k += n;
    rev(a, 0, k - 1);
    rev(a, k, n - 1);
    rev(a, 0, n - 1);
}
