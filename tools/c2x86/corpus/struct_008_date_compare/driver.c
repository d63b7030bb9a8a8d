#include <stdio.h>

struct date {
    short year;
    unsigned char month;
    unsigned char day;
};

int date_compare(struct date a, struct date b);

int main(void)
{
    struct date d[] = {{2024, 1, 1}, {2023, 12, 31}, {2024, 1, 2}, {2024, 2, 1}, {-44, 3, 15}, {2024, 1, 1}};
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++)
            printf("%2d", date_compare(d[i], d[j]));
        printf("\n");
    }
    return 0;
}
