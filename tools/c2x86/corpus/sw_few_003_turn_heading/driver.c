#include <stdio.h>

int turn_heading(int heading, char cmd);

int main(void)
{
    const char *cmds = "LLRUUXRRRL";
    int h = 0;
    for (int i = 0; cmds[i]; i++) {
        h = turn_heading(h, cmds[i]);
        printf("%c -> %d\n", cmds[i], h);
    }
    return 0;
}
