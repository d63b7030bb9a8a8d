#include <stdio.h>
#include <stdint.h>

int parse_hex_u32(const char *s, uint32_t *out);

int main(void)
{
    const char *v[] = {"0", "ff", "FF", "dead_BEEF", "12345678", "123456789", "", "xyz", "7fffffff", "a0b1C2"};
    for (int i = 0; i < 10; i++) {
        uint32_t x = 0;
        int r = parse_hex_u32(v[i], &x);
        printf("%s -> %d %#x\n", v[i], r, r == 0 ? (unsigned)x : 0u);
    }
    return 0;
}
