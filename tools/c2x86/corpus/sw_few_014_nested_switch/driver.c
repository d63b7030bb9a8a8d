#include <stdio.h>

int move_cost(int terrain, int vehicle);

int main(void)
{
    for (int t = 0; t < 4; t++) {
        printf("terrain %d:", t);
        for (int v = 0; v < 4; v++)
            printf(" %d", move_cost(t, v));
        printf("\n");
    }
    return 0;
}
