#include <stdio.h>
#include <stddef.h>

int hamming_distance_buf(const unsigned char *a, const unsigned char *b, size_t n);

int main(void)
{
    unsigned char a[] = {0x00, 0xFF, 0x0F, 0xAA, 0x12, 0x34};
    unsigned char b[] = {0x00, 0x00, 0xF0, 0x55, 0x12, 0x35};
    printf("%d\n", hamming_distance_buf(a, b, 6));
    printf("%d\n", hamming_distance_buf(a, b, 1));
    printf("%d\n", hamming_distance_buf(a, b, 2));
    printf("%d\n", hamming_distance_buf(a, a, 6));
    printf("%d\n", hamming_distance_buf(a + 3, b + 3, 3));
    printf("%d\n", hamming_distance_buf(a, b, 0));
    return 0;
}
