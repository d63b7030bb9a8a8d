#include <stdio.h>

int isbn10_valid(const char *s);

int main(void)
{
    const char *v[] = {"0-306-40615-2", "0306406152", "0306406153", "080442957X", "0-8044-2957-x",
                       "X804429570", "12345", "", "0-306-40615-22", "3-598-21508-8", "3a98215088"};
    for (int i = 0; i < 11; i++)
        printf("\"%s\" -> %d\n", v[i], isbn10_valid(v[i]));
    return 0;
}
