#include <stdio.h>

unsigned gray_roundtrip(unsigned n, unsigned *gray);

int main(void)
{
    unsigned v[] = {0, 1, 2, 3, 4, 7, 8, 255, 1000, 0x80000000u, 0xFFFFFFFFu};
    for (int i = 0; i < 11; i++) {
        unsigned g;
        unsigned b = gray_roundtrip(v[i], &g);
        printf("%u -> gray %#x -> %u\n", v[i], g, b);
    }
    return 0;
}
