#include <stdio.h>

int parse_signed_digits(const char *s, long *out);

int main(void)
{
    const char *v[] = {"0", "42", "-42", "+7", "", "-", "12a", "007", "--1", "999999999999", "9999999999999"};
    for (int i = 0; i < 11; i++) {
        long x = 0;
        int r = parse_signed_digits(v[i], &x);
        printf("\"%s\" -> %d %ld\n", v[i], r, r == 0 ? x : 0L);
    }
    return 0;
}
