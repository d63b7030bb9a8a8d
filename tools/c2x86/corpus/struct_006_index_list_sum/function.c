#include <stddef.h>

struct node {
    int value;
    struct node *next;
};

long list_sum(const struct node *head, int *count)
{
    long s = 0;
    int c = 0;
    while (head != NULL) {
        s += head->value;
        c++;
        head = head->next;
    }
    *count = c;
    return s;
}
