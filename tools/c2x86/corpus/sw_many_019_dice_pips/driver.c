#include <stdio.h>

unsigned pip_mask(int face);

int main(void)
{
    for (int f = 0; f <= 7; f++) {
        unsigned m = pip_mask(f);
        printf("%d: %#05x ", f, m);
        for (int i = 0; i < 9; i++)
            putchar((m >> i) & 1u ? 'o' : '.');
        putchar('\n');
    }
    return 0;
}
