#include <stdio.h>

void transpose_rect(const short *src, short *dst, int rows, int cols);

int main(void)
{
    short m[12];
    for (int i = 0; i < 12; i++)
        m[i] = (short)(i * 1111 - 6000);
    short t[12];
    int shapes[][2] = {{3, 4}, {4, 3}, {1, 12}, {2, 6}};
    for (int s = 0; s < 4; s++) {
        transpose_rect(m, t, shapes[s][0], shapes[s][1]);
        printf("%dx%d:", shapes[s][0], shapes[s][1]);
        for (int i = 0; i < 12; i++)
            printf(" %d", t[i]);
        printf("\n");
    }
    return 0;
}
