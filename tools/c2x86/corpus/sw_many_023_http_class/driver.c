#include <stdio.h>

int http_status_family(int status, int *retryable);

int main(void)
{
    int v[] = {100, 200, 204, 301, 404, 408, 429, 500, 501, 503, 99, 600, -200};
    for (int i = 0; i < 13; i++) {
        int r;
        int f = http_status_family(v[i], &r);
        printf("%d -> %c %d\n", v[i], f, r);
    }
    return 0;
}
