#include <stdio.h>

int count_token_kinds(const char *src, int counts[6]);

int main(void)
{
    const char *v[] = {"", "int main(void) { return 0; }", "a[i] = b[j], c = {1, 2};", "(((", "x==y;"};
    for (int i = 0; i < 5; i++) {
        int c[6];
        int o = count_token_kinds(v[i], c);
        printf("%d: %d %d %d %d %d %d other %d\n", i, c[0], c[1], c[2], c[3], c[4], c[5], o);
    }
    return 0;
}
