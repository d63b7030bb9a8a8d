#include <stdio.h>

int suit_points(char suit, int rank);

int main(void)
{
    const char *s = "HDSCXh";
    for (int i = 0; s[i]; i++)
        printf("%c -> %d\n", s[i], suit_points(s[i], i + 2));
    return 0;
}
