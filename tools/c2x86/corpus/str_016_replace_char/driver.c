#include <stdio.h>
#include <string.h>

int replace_all_chars(char *s, char from, char to);

int main(void)
{
    char buf[64];
    strcpy(buf, "a-b-c--d");
    printf("%d %s\n", replace_all_chars(buf, '-', '_'), buf);
    strcpy(buf, "no matches");
    printf("%d %s\n", replace_all_chars(buf, 'z', 'y'), buf);
    strcpy(buf, "aaaa");
    printf("%d %s\n", replace_all_chars(buf, 'a', 'a'), buf);
    strcpy(buf, "path/to/file");
    printf("%d %s\n", replace_all_chars(buf, '/', '\\'), buf);
    printf("%d %s\n", replace_all_chars(buf, '\0', 'x'), buf);
    return 0;
}
