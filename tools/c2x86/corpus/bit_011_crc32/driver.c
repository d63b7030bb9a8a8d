#include <stdio.h>
#include <stdint.h>
#include <string.h>

uint32_t crc32_bitwise(const unsigned char *data, size_t n);

int main(void)
{
    const char *v[] = {"", "a", "abc", "123456789", "The quick brown fox jumps over the lazy dog"};
    for (int i = 0; i < 5; i++)
        printf("%08x\n", (unsigned)crc32_bitwise((const unsigned char *)v[i], strlen(v[i])));
    unsigned char zeros[32] = {0};
    printf("%08x\n", (unsigned)crc32_bitwise(zeros, 32));
    return 0;
}
