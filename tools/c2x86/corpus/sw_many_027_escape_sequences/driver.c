#include <stdio.h>

int unescape(const char *in, char *out);

int main(void)
{
    const char *v[] = {"plain", "a\\nb", "tab\\there", "q\\\"uote\\\"", "back\\\\slash", "nul\\0x", "bad\\q", "end\\", "\\a\\b\\f\\v\\r"};
    for (int i = 0; i < 9; i++) {
        char out[32];
        int n = unescape(v[i], out);
        printf("%d:", n);
        for (int k = 0; k < n; k++)
            printf(" %02x", (unsigned char)out[k]);
        printf("\n");
    }
    return 0;
}
