#include <stdio.h>

const char *weekday_name(int d);

int main(void)
{
    for (int d = -1; d <= 7; d++)
        printf("%d -> %s\n", d, weekday_name(d));
    return 0;
}
