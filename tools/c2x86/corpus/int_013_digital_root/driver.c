#include <stdio.h>

int digital_root(int n);

int main(void)
{
    int v[] = {-5, 0, 1, 9, 10, 18, 38, 123456789, 2147483647, 999999999};
    for (int i = 0; i < 10; i++)
        printf("droot(%d) = %d\n", v[i], digital_root(v[i]));
    return 0;
}
