#include <stdio.h>

long apply_op(char op, long a, long b);

int main(void)
{
    const char ops[] = "+-*/%/";
    long a[] = {7, 7, -7, 7, 7, -100};
    long b[] = {5, 9, 6, 2, 3, 0};
    for (int i = 0; i < 6; i++)
        printf("%ld %c %ld = %ld\n", a[i], ops[i], b[i], apply_op(ops[i], a[i], b[i]));
    return 0;
}
