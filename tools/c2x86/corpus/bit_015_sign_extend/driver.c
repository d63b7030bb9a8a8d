#include <stdio.h>
#include <stdint.h>

int64_t sign_extend(uint64_t x, unsigned bits);

int main(void)
{
    uint64_t x[] = {0x7, 0xF, 0x8, 0xFF, 0x80, 0x7F, 0xFFFFF, 0x123456789ULL, 0xFFFFFFFFFFFFFFFFULL, 0x1};
    unsigned b[] = {4, 4, 4, 8, 8, 8, 20, 33, 64, 1};
    for (int i = 0; i < 10; i++)
        printf("sx(%#llx, %u) = %lld\n", (unsigned long long)x[i], b[i], (long long)sign_extend(x[i], b[i]));
    return 0;
}
