#include <stdio.h>

char letter_grade(int score);

int main(void)
{
    int v[] = {-1, 0, 49, 50, 59, 60, 69, 70, 79, 80, 89, 90, 99, 100, 101};
    for (int i = 0; i < 15; i++)
        printf("%d -> %c\n", v[i], letter_grade(v[i]));
    return 0;
}
