#include <stdio.h>

int program_length(const unsigned char *code, int n, int *count);

int main(void)
{
    unsigned char p1[] = {0x00, 0x01, 0x10, 0x04, 0x07};
    unsigned char p2[] = {0x03, 1, 2, 3, 4, 0x02, 5, 6, 0x06, 7, 8, 0x05, 0xFE};
    unsigned char p3[] = {0x00, 0x09, 0x00};
    unsigned char p4[] = {0x03, 0x00};
    int c;
    int r = program_length(p1, 5, &c);
    printf("%d %d\n", r, c);
    r = program_length(p2, 13, &c);
    printf("%d %d\n", r, c);
    r = program_length(p3, 3, &c);
    printf("%d %d\n", r, c);
    r = program_length(p4, 2, &c);
    printf("%d %d\n", r, c);
    r = program_length(p1, 0, &c);
    printf("%d %d\n", r, c);
    return 0;
}
