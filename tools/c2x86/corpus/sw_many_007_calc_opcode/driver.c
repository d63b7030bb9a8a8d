#include <stdio.h>

int calc_opcode(int op, int a, int b, int *err);

int main(void)
{
    int a[] = {100, -17, 12};
    int b[] = {7, 5, 0};
    for (int i = 0; i < 3; i++) {
        for (int op = 0; op <= 8; op++) {
            int e;
            int r = calc_opcode(op, a[i], b[i], &e);
            printf("op%d(%d,%d) = %d err %d\n", op, a[i], b[i], r, e);
        }
    }
    return 0;
}
