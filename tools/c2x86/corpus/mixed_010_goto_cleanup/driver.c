#include <stdio.h>

long process_records(const int *recs, int n, int *bad_index);

int main(void)
{
    int a[] = {1, 2, 3, 4, 5};
    int b[] = {10, 20, -3, 40};
    int c[] = {2147483647, 2147483647, 2147483647};
    int bad;
    long r = process_records(a, 5, &bad);
    printf("%ld %d\n", r, bad);
    r = process_records(b, 4, &bad);
    printf("%ld %d\n", r, bad);
    r = process_records(c, 3, &bad);
    printf("%ld %d\n", r, bad);
    r = process_records(a, 0, &bad);
    printf("%ld %d\n", r, bad);
    return 0;
}
