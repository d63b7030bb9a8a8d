#include <stdio.h>
#include <stdint.h>

int mix_bytes(uint8_t a, uint8_t b, int8_t c);

int main(void)
{
    printf("%d\n", mix_bytes(1, 2, 3));
    printf("%d\n", mix_bytes(200, 100, -5));
    printf("%d\n", mix_bytes(255, 255, 127));
    printf("%d\n", mix_bytes(0, 1, -128));
    printf("%d\n", mix_bytes(128, 128, 0));
    printf("%d\n", mix_bytes(17, 250, -1));
    printf("%d\n", mix_bytes(0, 0, 0));
    return 0;
}
