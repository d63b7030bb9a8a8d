#include <stdio.h>

struct clock {
    int days;
    int hours;
    int minutes;
    int seconds;
};

void time_normalize(struct clock *c);

int main(void)
{
    struct clock cs[] = {{0, 0, 0, 0}, {0, 0, 0, 86400}, {0, 25, 61, 61}, {1, 0, 0, -1}, {0, -1, 0, 0},
                         {10, 100, -1000, 100000}, {0, 0, 0, -2147483647}};
    for (int i = 0; i < 7; i++) {
        time_normalize(&cs[i]);
        printf("%d %02d:%02d:%02d\n", cs[i].days, cs[i].hours, cs[i].minutes, cs[i].seconds);
    }
    return 0;
}
