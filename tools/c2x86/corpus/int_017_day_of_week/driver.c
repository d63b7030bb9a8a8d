#include <stdio.h>

int day_of_week(int y, int m, int d);

int main(void)
{
    int dates[][3] = {{1970, 1, 1}, {2000, 1, 1}, {2000, 2, 29}, {2000, 3, 1}, {1999, 12, 31},
                      {2024, 7, 4}, {1900, 1, 1}, {2100, 12, 31}, {1066, 10, 14}, {2038, 1, 19}};
    for (int i = 0; i < 10; i++)
        printf("%04d-%02d-%02d -> %d\n", dates[i][0], dates[i][1], dates[i][2],
               day_of_week(dates[i][0], dates[i][1], dates[i][2]));
    return 0;
}
