#include <string.h>

const char *errno_text(int code, int *len)
{
    const char *m;
    switch (code) {
    case 0: m = "success"; break;
    case 1: m = "operation not permitted"; break;
    case 2: m = "no such file"; break;
    case 3: m = "no such process"; break;
    case 4: m = "interrupted"; break;
    case 5: m = "I/O error"; break;
    case 6: m = "no such device"; break;
    case 7: m = "argument list too long"; break;
    case 8: m = "exec format error"; break;
    default: m = "unknown error"; break;
    }
    *len = (int)strlen(m);
    return m;
}
