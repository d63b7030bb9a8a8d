#include <stdio.h>
#include <stdint.h>
#include <string.h>

uint32_t adler32(const unsigned char *p, size_t n);

int main(void)
{
    const char *v[] = {"", "a", "Wikipedia", "abcdefghijklmnopqrstuvwxyz", "0000000000000000000000000000000000"};
    for (int i = 0; i < 5; i++)
        printf("%08x\n", (unsigned)adler32((const unsigned char *)v[i], strlen(v[i])));
    unsigned char ff[4096];
    memset(ff, 0xFF, sizeof ff);
    printf("%08x\n", (unsigned)adler32(ff, sizeof ff));
    return 0;
}
