#include <stdio.h>
#include <stdint.h>

uint64_t fnv1a64(const char *s);

int main(void)
{
    const char *v[] = {"", "a", "foobar", "hello world", "\x80\xff", "kiln"};
    for (int i = 0; i < 6; i++)
        printf("%016llx\n", (unsigned long long)fnv1a64(v[i]));
    return 0;
}
