#include <stdio.h>

int field_at(const char *line, char delim, int k, char *out, int cap);

int main(void)
{
    char buf[8];
    const char *csv = "name,age,,city,a-very-long-field";
    for (int k = 0; k < 7; k++) {
        int n = field_at(csv, ',', k, buf, (int)sizeof buf);
        printf("%d: %d [%s]\n", k, n, buf);
    }
    printf("%d [%s]\n", field_at("", ';', 0, buf, 8), buf);
    printf("%d [%s]\n", field_at("a;b", ';', 1, buf, 8), buf);
    return 0;
}
