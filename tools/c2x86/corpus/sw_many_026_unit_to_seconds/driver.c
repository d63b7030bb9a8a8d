#include <stdio.h>

long duration_seconds(const char *s);

int main(void)
{
    const char *v[] = {"90s", "15m", "2h", "3d", "1w", "1y", "0s", "10", "h", "5x", "7dd", "999999999y"};
    for (int i = 0; i < 12; i++)
        printf("%s -> %ld\n", v[i], duration_seconds(v[i]));
    return 0;
}
