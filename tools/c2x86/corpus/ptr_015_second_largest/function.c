int second_largest(const int *a, int n, int *found)
{
    int first = 0, second = 0;
    int have1 = 0, have2 = 0;
    for (int i = 0; i < n; i++) {
        int v = a[i];
        if (!have1 || v > first) {
            if (have1) {
                second = first;
                have2 = 1;
            }
            first = v;
            have1 = 1;
        } else if (v != first && (!have2 || v > second)) {
            second = v;
            have2 = 1;
        }
    }
    *found = have2;
    return have2 ? second : 0;
}
