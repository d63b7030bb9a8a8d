#include <stdio.h>

int key_delta(char key, int *dx, int *dy);

int main(void)
{
    const char *keys = "hjklwasdyubnxq";
    int x = 0, y = 0;
    for (int i = 0; keys[i]; i++) {
        int dx, dy;
        int ok = key_delta(keys[i], &dx, &dy);
        x += dx;
        y += dy;
        printf("%c: %d (%d,%d) pos (%d,%d)\n", keys[i], ok, dx, dy, x, y);
    }
    return 0;
}
