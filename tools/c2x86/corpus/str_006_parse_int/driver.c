#include <stdio.h>

int parse_int(const char *s, const char **end);

int main(void)
{
    const char *v[] = {"42", "   -17xyz", "+0", "", "-", "2147483647", "2147483648", "-2147483648",
                       "-99999999999999", "\t 12 34"};
    for (int i = 0; i < 10; i++) {
        const char *e;
        int r = parse_int(v[i], &e);
        printf("\"%s\" -> %d rest \"%s\"\n", v[i], r, e);
    }
    return 0;
}
