#include <stdio.h>

int classify_number(const char *s);

int main(void)
{
    const char *v[] = {"", "0", "-12", "+", "3.", ".5", ".", "1e5", "1e", "2.5E-3", "-.5e+10", "1.2.3", "abc", "7e+"};
    for (int i = 0; i < 14; i++)
        printf("\"%s\" -> %d\n", v[i], classify_number(v[i]));
    return 0;
}
