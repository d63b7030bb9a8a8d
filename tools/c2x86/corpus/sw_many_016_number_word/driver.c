#include <stdio.h>

int digit_words(unsigned n, char *buf, int cap);

int main(void)
{
    char buf[128];
    unsigned v[] = {0, 7, 42, 1905, 4294967295u};
    for (int i = 0; i < 5; i++) {
        int r = digit_words(v[i], buf, (int)sizeof buf);
        printf("%u -> %d %s\n", v[i], r, buf);
    }
    printf("small cap -> %d\n", digit_words(123456, buf, 10));
    return 0;
}
