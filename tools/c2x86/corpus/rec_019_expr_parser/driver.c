#include <stdio.h>

int eval_expr(const char *s, long *out);

int main(void)
{
    const char *v[] = {"1 + 2 * 3", "(1 + 2) * 3", "-(4 - 10) % 4", "100 / 7 / 2", "2 * (3 + (4 - 1)) * -2",
                       "7 / 0", "(1 + 2", "abc", "1 2", "", "  42  ", "-7 % 3 + 7 / -2"};
    for (int i = 0; i < 12; i++) {
        long r;
        int e = eval_expr(v[i], &r);
        printf("\"%s\" -> err %d value %ld\n", v[i], e, r);
    }
    return 0;
}
