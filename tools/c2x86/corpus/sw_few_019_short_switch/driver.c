#include <stdio.h>

signed char channel_gain(unsigned short channel);

int main(void)
{
    unsigned short v[] = {0, 1, 2, 3, 63, 64, 200, 65535, 65534};
    for (int i = 0; i < 9; i++)
        printf("%u -> %d\n", v[i], channel_gain(v[i]));
    return 0;
}
