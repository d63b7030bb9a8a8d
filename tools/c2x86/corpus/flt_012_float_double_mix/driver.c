#include <stdio.h>

double float_double_mix(int k);

int main(void)
{
    int v[] = {0, 1, -1, 10, 1000, -33};
    for (int i = 0; i < 6; i++)
        printf("k=%d -> %.17g\n", v[i], float_double_mix(v[i]));
    return 0;
}
