#include <stdio.h>
#include <stddef.h>

struct node {
    int value;
    struct node *next;
};

long list_sum(const struct node *head, int *count);

int main(void)
{
    struct node n[6];
    int vals[] = {5, -3, 100, 2147483647, 2147483647, -8};
    for (int i = 0; i < 6; i++) {
        n[i].value = vals[i];
        n[i].next = i + 1 < 6 ? &n[i + 1] : NULL;
    }
    int c;
    long s = list_sum(NULL, &c);
    printf("%ld %d\n", s, c);
    s = list_sum(&n[5], &c);
    printf("%ld %d\n", s, c);
    s = list_sum(&n[0], &c);
    printf("%ld %d\n", s, c);
    n[2].next = NULL;
    s = list_sum(&n[0], &c);
    printf("%ld %d\n", s, c);
    return 0;
}
