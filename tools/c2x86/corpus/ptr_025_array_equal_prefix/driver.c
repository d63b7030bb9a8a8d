#include <stdio.h>
#include <stddef.h>

size_t common_prefix_len(const unsigned char *a, const unsigned char *b, size_t n, int *diff);

int main(void)
{
    unsigned char a[] = {1, 2, 3, 4, 250, 6};
    unsigned char b[] = {1, 2, 3, 4, 5, 6};
    unsigned char c[] = {9, 2, 3, 4, 250, 6};
    int d;
    size_t r = common_prefix_len(a, b, 6, &d);
    printf("%zu %d\n", r, d);
    r = common_prefix_len(b, a, 6, &d);
    printf("%zu %d\n", r, d);
    r = common_prefix_len(a, a, 6, &d);
    printf("%zu %d\n", r, d);
    r = common_prefix_len(a, c, 6, &d);
    printf("%zu %d\n", r, d);
    r = common_prefix_len(a, b, 3, &d);
    printf("%zu %d\n", r, d);
    return 0;
}
