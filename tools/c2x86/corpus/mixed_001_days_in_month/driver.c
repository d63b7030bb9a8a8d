#include <stdio.h>

int days_in_month(int year, int month);

int main(void)
{
    for (int m = 0; m <= 13; m++)
        printf("2023-%d: %d\n", m, days_in_month(2023, m));
    printf("2024-2: %d\n", days_in_month(2024, 2));
    printf("1900-2: %d\n", days_in_month(1900, 2));
    printf("2000-2: %d\n", days_in_month(2000, 2));
    return 0;
}
