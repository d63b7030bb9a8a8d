#include <stdio.h>

int day_of_year(int year, int month, int day);

int main(void)
{
    printf("%d\n", day_of_year(2023, 1, 1));
    printf("%d\n", day_of_year(2023, 12, 31));
    printf("%d\n", day_of_year(2024, 12, 31));
    printf("%d\n", day_of_year(2024, 3, 1));
    printf("%d\n", day_of_year(2023, 3, 1));
    printf("%d\n", day_of_year(1900, 3, 1));
    printf("%d\n", day_of_year(2000, 3, 1));
    printf("%d\n", day_of_year(2023, 7, 4));
    printf("%d\n", day_of_year(2023, 13, 1));
    printf("%d\n", day_of_year(2023, 0, 1));
    return 0;
}
