#include <stdio.h>

struct ymd {
    int y;
    int m;
    int d;
};

long days_between(struct ymd a, struct ymd b, int *ok);

int main(void)
{
    struct ymd p[][2] = {
        {{1970, 1, 1}, {1970, 1, 1}},
        {{1970, 1, 1}, {2000, 1, 1}},
        {{2000, 2, 28}, {2000, 3, 1}},
        {{1900, 2, 28}, {1900, 3, 1}},
        {{2024, 12, 31}, {2023, 1, 1}},
        {{-4713, 11, 24}, {2000, 1, 1}},
        {{2023, 2, 29}, {2023, 3, 1}},
        {{2023, 13, 1}, {2023, 3, 1}},
        {{1600, 2, 29}, {2400, 2, 29}},
    };
    for (int i = 0; i < 9; i++) {
        int ok;
        long d = days_between(p[i][0], p[i][1], &ok);
        printf("%d %ld\n", ok, d);
    }
    return 0;
}
