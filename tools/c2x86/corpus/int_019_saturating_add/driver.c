#include <stdio.h>
#include <stdint.h>

int32_t sat_add32(int32_t a, int32_t b);

int main(void)
{
    int32_t a[] = {1, INT32_MAX, INT32_MAX, INT32_MIN, INT32_MIN, -5, 0, 2000000000, -2000000000, 100};
    int32_t b[] = {2, 1, INT32_MAX, -1, INT32_MIN, 5, 0, 2000000000, -2000000000, -200};
    for (int i = 0; i < 10; i++)
        printf("%d + %d = %d\n", (int)a[i], (int)b[i], (int)sat_add32(a[i], b[i]));
    return 0;
}
