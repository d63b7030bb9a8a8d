#include <stdio.h>

int next_light(int state, int *seconds);

int main(void)
{
    int s = 0;
    for (int i = 0; i < 7; i++) {
        int secs;
        int n = next_light(s, &secs);
        printf("%d -> %d (%d s)\n", s, n, secs);
        s = n;
    }
    int secs = 0;
    int n = next_light(9, &secs);
    printf("bad -> %d (%d s)\n", n, secs);
    n = next_light(-1, &secs);
    printf("neg -> %d (%d s)\n", n, secs);
    return 0;
}
