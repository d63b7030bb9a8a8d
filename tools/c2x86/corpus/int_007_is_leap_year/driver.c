#include <stdio.h>

int is_leap_year(int year);

int main(void)
{
    int y[] = {1900, 2000, 2004, 2023, 2024, 2100, 2400, 0, -4, -100, 1600, 1};
    for (int i = 0; i < 12; i++)
        printf("%d -> %d\n", y[i], is_leap_year(y[i]));
    return 0;
}
