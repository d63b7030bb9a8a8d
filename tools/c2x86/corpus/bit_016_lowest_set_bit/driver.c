#include <stdio.h>
#include <stdint.h>

int lowest_set_index(uint32_t x);

int main(void)
{
    uint32_t v[] = {0, 1, 2, 3, 8, 12, 0x80000000u, 0xFFFF0000u, 0x00100100u, 0xFFFFFFFFu};
    for (int i = 0; i < 10; i++)
        printf("%#x -> %d\n", (unsigned)v[i], lowest_set_index(v[i]));
    return 0;
}
