#include <stdio.h>

const char *tristate_name(int v);

int main(void)
{
    int v[] = {-2, -1, 0, 1, 2, 1000};
    for (int i = 0; i < 6; i++)
        printf("%d -> %s\n", v[i], tristate_name(v[i]));
    return 0;
}
