#include <stdio.h>

unsigned bit_command(unsigned word, int cmd, unsigned bit);

int main(void)
{
    unsigned w = 0x0F0Fu;
    for (int cmd = 0; cmd < 5; cmd++) {
        printf("cmd %d: %#x %#x %#x\n", cmd, bit_command(w, cmd, 0), bit_command(w, cmd, 4),
               bit_command(w, cmd, 31));
    }
    printf("%#x\n", bit_command(0xFFFFFFFFu, 1, 35));
    return 0;
}
