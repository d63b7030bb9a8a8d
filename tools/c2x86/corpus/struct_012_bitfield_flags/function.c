#include <string.h>

struct flags {
    unsigned mode : 3;
    unsigned level : 5;
    unsigned enabled : 1;
    unsigned code : 7;
};

unsigned pack_flags(unsigned mode, unsigned level, int enabled, unsigned code, struct flags *out)
{
    struct flags f;
    memset(&f, 0, sizeof f);
    f.mode = mode;
    f.level = level;
    f.enabled = enabled != 0;
    f.code = code;
    *out = f;
    return f.mode + 10u * f.level + 1000u * f.enabled + 10000u * f.code;
}
