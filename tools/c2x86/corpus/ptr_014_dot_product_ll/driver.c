#include <stdio.h>
#include <stdint.h>

int64_t dot_i32(const int32_t *a, const int32_t *b, int n, int stride_b);

int main(void)
{
    int32_t a[] = {1, 2, 3, 4, 2147483647, -2147483647 - 1};
    int32_t b[] = {5, 6, 7, 8, 9, 10, 11, 12, 2147483647, 2147483647, 13, 14};
    printf("%lld\n", (long long)dot_i32(a, b, 4, 1));
    printf("%lld\n", (long long)dot_i32(a, b, 4, 2));
    printf("%lld\n", (long long)dot_i32(a + 4, b + 8, 2, 1));
    printf("%lld\n", (long long)dot_i32(a, b, 0, 1));
    printf("%lld\n", (long long)dot_i32(a, b + 11, 3, -1));
    return 0;
}
