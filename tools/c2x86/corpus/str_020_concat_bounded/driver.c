#include <stdio.h>
#include <string.h>

int join_path(char *out, size_t cap, const char *dir, const char *file);

int main(void)
{
    char buf[24];
    const char *d[] = {"/usr", "/usr/", "/usr///", "", "/", "rel", "/a/very/long/directory"};
    const char *f[] = {"bin", "/bin", "lib", "file.txt", "etc", "", "name.c"};
    for (int i = 0; i < 7; i++) {
        strcpy(buf, "?");
        int n = join_path(buf, sizeof buf, d[i], f[i]);
        printf("%d [%s]\n", n, buf);
    }
    return 0;
}
