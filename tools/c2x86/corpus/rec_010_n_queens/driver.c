#include <stdio.h>

int n_queens(int n);

int main(void)
{
    for (int n = 0; n <= 10; n++)
        printf("queens(%d) = %d\n", n, n_queens(n));
    return 0;
}
