#include <stdio.h>

int material_balance(const char *pieces);

int main(void)
{
    const char *v[] = {"", "rnbqkbnrpppppppp/PPPPPPPPRNBQKBNR", "KQk", "kqK", "PPPpp", "R/b/n/8", "xyz123"};
    for (int i = 0; i < 7; i++)
        printf("%s -> %d\n", v[i], material_balance(v[i]));
    return 0;
}
