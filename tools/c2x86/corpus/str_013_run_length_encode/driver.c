#include <stdio.h>

int rle_encode(const char *s, char *out, int cap);

int main(void)
{
    char out[64];
    const char *v[] = {"", "a", "aaab", "abc", "wwwwwwwwwwwwbbbxxxxxxxxxxxxxxxxxxxxxxxxxx", "zzzzzzzzzzzz"};
    for (int i = 0; i < 6; i++) {
        int n = rle_encode(v[i], out, (int)sizeof out);
        printf("%d [%s]\n", n, n >= 0 ? out : "");
    }
    printf("%d\n", rle_encode("abcdef", out, 8));
    return 0;
}
