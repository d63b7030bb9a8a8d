#include <stdio.h>

int stack_eval_rpn(const char *expr, long *result);

int main(void)
{
    const char *v[] = {"3 4 +", "5 1 2 + 4 * + 3 -", "9 9 * 9 * 9 * 9 *", "1 +", "1 2", "", "2 x", "12345678901234567"};
    for (int i = 0; i < 8; i++) {
        long r = 0;
        int s = stack_eval_rpn(v[i], &r);
        printf("\"%s\" -> %d %ld\n", v[i], s, s == 0 ? r : 0L);
    }
    return 0;
}
