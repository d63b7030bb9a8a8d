#include <stdio.h>

int scrabble_score(const char *word);

int main(void)
{
    const char *v[] = {"", "a", "cabbage", "QUIZ", "oxyphenbutazone", "Hello, World!", "jukebox", "zzz"};
    for (int i = 0; i < 8; i++)
        printf("%s -> %d\n", v[i], scrabble_score(v[i]));
    return 0;
}
