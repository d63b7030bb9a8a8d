#include <stdio.h>
#include <stdint.h>

uint64_t abs_diff_i64(int64_t a, int64_t b);

int main(void)
{
    int64_t a[] = {0, 5, -5, INT64_MAX, INT64_MIN, INT64_MIN, -1, 1000};
    int64_t b[] = {0, -5, 5, INT64_MIN, INT64_MAX, 0, INT64_MAX, 999};
    for (int i = 0; i < 8; i++)
        printf("|%lld - %lld| = %llu\n", (long long)a[i], (long long)b[i],
               (unsigned long long)abs_diff_i64(a[i], b[i]));
    return 0;
}
