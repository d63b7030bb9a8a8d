#include <stdio.h>

char scan_to_ascii(unsigned char code);

int main(void)
{
    unsigned char codes[] = {0x00, 0x01, 0x02, 0x05, 0x0B, 0x0C, 0x0D, 0x0E, 0x82, 0x8A, 0x8D, 0xFF};
    for (int i = 0; i < 12; i++)
        printf("%#04x -> %c\n", codes[i], scan_to_ascii(codes[i]));
    return 0;
}
