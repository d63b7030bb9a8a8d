#include <stdio.h>

void reverse_ints(int *a, int n);

static void show(const int *a, int n)
{
    for (int i = 0; i < n; i++)
        printf("%d ", a[i]);
    printf("\n");
}

int main(void)
{
    int a[] = {1, 2, 3, 4, 5, 6, 7};
    reverse_ints(a, 7);
    show(a, 7);
    reverse_ints(a, 6);
    show(a, 7);
    reverse_ints(a + 2, 1);
    show(a, 7);
    reverse_ints(a + 1, 2);
    show(a, 7);
    int b[1] = {42};
    reverse_ints(b, 0);
    show(b, 1);
    return 0;
}
