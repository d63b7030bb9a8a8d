#include <stdio.h>

int sparse_code_weight(unsigned code);

int main(void)
{
    unsigned v[] = {0, 0x10u, 0x11u, 0x1000u, 0x100000u, 0xFFFFFFFFu, 0xFFFFFFFEu};
    for (int i = 0; i < 7; i++)
        printf("%#x -> %d\n", v[i], sparse_code_weight(v[i]));
    return 0;
}
