#include <string.h>

int join_path(char *out, size_t cap, const char *dir, const char *file)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    while (*file == '/')
        file++;
    size_t fl = strlen(file);
    int need_slash = dl > 0 && dir[dl - 1] != '/';
    size_t total = dl + (size_t)need_slash + fl;
    if (total + 1 > cap)
        return -1;
    memcpy(out, dir, dl);
    if (need_slash)
        out[dl] = '/';
    memcpy(out + dl + need_slash, file, fl);
    out[total] = '\0';
    return (int)total;
}
