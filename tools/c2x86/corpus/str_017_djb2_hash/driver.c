#include <stdio.h>
#include <stdint.h>

uint32_t djb2(const char *s);

int main(void)
{
    const char *v[] = {"", "a", "abc", "hello", "Hello", "The quick brown fox", "\xff\xfe", "collision?"};
    for (int i = 0; i < 8; i++)
        printf("%08x\n", (unsigned)djb2(v[i]));
    return 0;
}
