#include <stdio.h>
#include <stdint.h>

int clz32(uint32_t x);

int main(void)
{
    uint32_t v[] = {0, 1, 2, 3, 0xFF, 0x100, 0x7FFFFFFFu, 0x80000000u, 0x00010000u, 0x0000FFFFu};
    for (int i = 0; i < 10; i++)
        printf("clz(%#x) = %d\n", (unsigned)v[i], clz32(v[i]));
    return 0;
}
