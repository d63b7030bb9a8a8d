#include <stdio.h>
#include <string.h>

struct flags {
    unsigned mode : 3;
    unsigned level : 5;
    unsigned enabled : 1;
    unsigned code : 7;
};

unsigned pack_flags(unsigned mode, unsigned level, int enabled, unsigned code, struct flags *out);

int main(void)
{
    unsigned in[][4] = {{0, 0, 0, 0}, {7, 31, 1, 127}, {8, 32, 2, 128}, {5, 17, 0, 99}, {3, 9, 1, 300}};
    for (int i = 0; i < 5; i++) {
        struct flags f;
        unsigned r = pack_flags(in[i][0], in[i][1], (int)in[i][2], in[i][3], &f);
        unsigned raw = 0;
        memcpy(&raw, &f, sizeof f < sizeof raw ? sizeof f : sizeof raw);
        printf("%u: mode %u level %u en %u code %u raw %#x\n", r, f.mode, f.level, f.enabled, f.code, raw & 0xFFFFu);
    }
    return 0;
}
