#include <stdio.h>

long huffman_cost(const long *freq, int n);

int main(void)
{
    long a[] = {5, 9, 12, 13, 16, 45};
    long b[] = {1, 1, 1, 1};
    long c[] = {0, 0, 7, 0};
    long d[] = {1, 2, 4, 8, 16, 32, 64, 128};
    long e[] = {100000000000L, 1, 1};
    printf("%ld\n", huffman_cost(a, 6));
    printf("%ld\n", huffman_cost(b, 4));
    printf("%ld\n", huffman_cost(c, 4));
    printf("%ld\n", huffman_cost(d, 8));
    printf("%ld\n", huffman_cost(e, 3));
    printf("%ld\n", huffman_cost(a, 0));
    return 0;
}
