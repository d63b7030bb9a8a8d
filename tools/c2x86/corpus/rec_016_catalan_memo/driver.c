#include <stdio.h>

unsigned long long catalan(int n);

int main(void)
{
    int v[] = {-1, 0, 1, 2, 3, 5, 10, 20, 30, 35, 36};
    for (int i = 0; i < 11; i++)
        printf("C(%d) = %llu\n", v[i], catalan(v[i]));
    return 0;
}
