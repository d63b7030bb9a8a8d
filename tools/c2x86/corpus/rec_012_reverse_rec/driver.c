#include <stdio.h>

int reverse_copy_rec(const char *s, char *out);

int main(void)
{
    char buf[64];
    const char *v[] = {"", "a", "ab", "recursion", "Was it a car or a cat I saw?"};
    for (int i = 0; i < 5; i++) {
        int n = reverse_copy_rec(v[i], buf);
        printf("%d [%s]\n", n, buf);
    }
    return 0;
}
