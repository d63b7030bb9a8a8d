#include <stdio.h>
#include <stdint.h>

uint64_t hex_to_u64(const char *s, int *ndigits);

int main(void)
{
    const char *v[] = {"0", "0x1F", "ff", "DEADbeef", "0xFFFFFFFFFFFFFFFF", "0x123456789abcdef0", "xyz", "0x", "12g4"};
    for (int i = 0; i < 9; i++) {
        int n;
        uint64_t x = hex_to_u64(v[i], &n);
        printf("%s -> %llu (%d digits)\n", v[i], (unsigned long long)x, n);
    }
    return 0;
}
