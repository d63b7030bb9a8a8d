#include <stdio.h>

unsigned long ackermann(unsigned long m, unsigned long n);

int main(void)
{
    unsigned long m[] = {0, 0, 1, 1, 2, 2, 3, 3, 3};
    unsigned long n[] = {0, 5, 0, 5, 0, 7, 0, 3, 6};
    for (int i = 0; i < 9; i++)
        printf("A(%lu,%lu) = %lu\n", m[i], n[i], ackermann(m[i], n[i]));
    return 0;
}
