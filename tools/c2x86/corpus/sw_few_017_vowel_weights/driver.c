#include <stdio.h>

int vowel_weight_sum(const char *w);

int main(void)
{
    const char *v[] = {"", "xyz", "banana", "onomatopoeia", "idiosyncrasies", "eeee", "queue"};
    for (int i = 0; i < 7; i++)
        printf("%s -> %d\n", v[i], vowel_weight_sum(v[i]));
    return 0;
}
