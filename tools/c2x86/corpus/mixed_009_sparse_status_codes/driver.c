#include <stdio.h>

int status_weight(int code, int attempts);

int main(void)
{
    int codes[] = {200, 201, 202, 301, 404, 500, 503, 999, -1, 0};
    for (int i = 0; i < 10; i++)
        printf("%d: %d %d\n", codes[i], status_weight(codes[i], 0), status_weight(codes[i], 3));
    return 0;
}
