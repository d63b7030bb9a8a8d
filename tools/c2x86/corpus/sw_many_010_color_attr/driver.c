#include <stdio.h>

int color_char_to_attr(char c);

int main(void)
{
    const char *s = "dwsorgbuDWvyRGBUxz0 ";
    for (int i = 0; s[i]; i++)
        printf("'%c' -> %d\n", s[i], color_char_to_attr(s[i]));
    return 0;
}
