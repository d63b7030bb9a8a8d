#include <stdio.h>

int level_bonus(int level);

int main(void)
{
    for (int l = -1; l <= 5; l++)
        printf("level %d -> %d\n", l, level_bonus(l));
    return 0;
}
