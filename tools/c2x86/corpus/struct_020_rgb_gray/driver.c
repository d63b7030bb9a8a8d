#include <stdio.h>

struct rgb {
    unsigned char r, g, b;
};

int to_gray(const struct rgb *px, unsigned char *out, int n);

int main(void)
{
    struct rgb px[] = {{0, 0, 0}, {255, 255, 255}, {255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {128, 64, 32}, {10, 200, 90}};
    unsigned char out[7];
    int b = to_gray(px, out, 7);
    printf("bright %d:", b);
    for (int i = 0; i < 7; i++)
        printf(" %u", out[i]);
    printf("\nsize %d\n", (int)sizeof(struct rgb));
    b = to_gray(px + 2, out, 2);
    printf("bright %d: %u %u\n", b, out[0], out[1]);
    return 0;
}
