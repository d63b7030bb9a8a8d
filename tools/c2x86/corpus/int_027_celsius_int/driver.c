#include <stdio.h>

int celsius_to_f_rounded(int tenths_c);

int main(void)
{
    int v[] = {0, 1000, -400, 370, 1, 2, 3, -1, -2, -3, -2731, 123456};
    for (int i = 0; i < 12; i++)
        printf("%d dC -> %d dF\n", v[i], celsius_to_f_rounded(v[i]));
    return 0;
}
