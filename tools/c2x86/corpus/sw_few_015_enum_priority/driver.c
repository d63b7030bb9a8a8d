#include <stdio.h>

enum priority { PRIO_LOW, PRIO_NORMAL, PRIO_HIGH, PRIO_URGENT };

int priority_weight(enum priority p, int age_days);

int main(void)
{
    int ages[] = {0, 6, 7, 30};
    for (int p = 0; p < 5; p++)
        for (int a = 0; a < 4; a++)
            printf("p=%d age=%d -> %d\n", p, ages[a], priority_weight((enum priority)p, ages[a]));
    return 0;
}
