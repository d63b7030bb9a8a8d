#include <stdio.h>
#include <limits.h>

int reverse_digits(int x);

int main(void)
{
    int v[] = {0, 5, 123, -123, 120, 1000000003, 1463847412, -2147483648, INT_MAX, -10};
    for (int i = 0; i < 10; i++)
        printf("reverse(%d) = %d\n", v[i], reverse_digits(v[i]));
    return 0;
}
