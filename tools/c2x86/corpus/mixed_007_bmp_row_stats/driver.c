#include <stdio.h>

struct img_stats {
    double mean;
    double variance;
    int above;
    int brightest_row;
};

int image_stats(const unsigned char *pix, int w, int h, int stride, unsigned char thr, struct img_stats *st);

int main(void)
{
    unsigned char img[6 * 8];
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 8; x++)
            img[y * 8 + x] = (unsigned char)((x * 37 + y * 91) % 256);
    struct img_stats s;
    int r = image_stats(img, 8, 6, 8, 128, &s);
    printf("%d mean %.6f var %.6f above %d row %d\n", r, s.mean, s.variance, s.above, s.brightest_row);
    r = image_stats(img, 5, 6, 8, 200, &s);
    printf("%d mean %.6f var %.6f above %d row %d\n", r, s.mean, s.variance, s.above, s.brightest_row);
    r = image_stats(img, 1, 1, 1, 0, &s);
    printf("%d mean %.6f var %.6f above %d row %d\n", r, s.mean, s.variance, s.above, s.brightest_row);
    r = image_stats(img, 9, 6, 8, 0, &s);
    printf("%d\n", r);
    return 0;
}
