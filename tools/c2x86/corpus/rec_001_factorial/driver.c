#include <stdio.h>

unsigned long long factorial(unsigned n);

int main(void)
{
    unsigned v[] = {0, 1, 2, 5, 10, 15, 20, 21, 100};
    for (int i = 0; i < 9; i++)
        printf("%u! = %llu\n", v[i], factorial(v[i]));
    return 0;
}
