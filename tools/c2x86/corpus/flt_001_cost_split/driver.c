#include <stdio.h>

float cost_split(void);

int main(void)
{
    float r = cost_split();
    printf("%.6g\n", r);
    printf("%a\n", (double)r);
    printf("%d\n", (int)r);
    return 0;
}
