#include <stdio.h>

struct config {
    int width;
    int height;
    double scale;
    char name[16];
    long flags;
};

long config_score(struct config c);

int main(void)
{
    struct config cs[] = {
        {640, 480, 1.0, "vga", 0},
        {1920, 1080, 1.5, "full-hd", 1},
        {0, 0, 0.0, "", 2},
        {3840, 2160, 0.333, "fifteen-chars!!", 4096},
    };
    for (int i = 0; i < 4; i++)
        printf("%ld\n", config_score(cs[i]));
    return 0;
}
