#include <stdio.h>

struct student {
    int id;
    float scores[3];
    char name[12];
};

int best_student(const struct student *s, int n, float *best_avg);

int main(void)
{
    struct student s[] = {
        {1, {70.0f, 80.0f, 90.0f}, "ada"},
        {2, {99.0f, 99.0f, 60.0f}, "brian"},
        {3, {50.0f, 60.0f, 95.5f}, "chen"},
        {4, {85.5f, 85.5f, 85.5f}, "dana"},
    };
    for (int n = 0; n <= 4; n++) {
        float avg;
        int b = best_student(s, n, &avg);
        printf("n=%d best=%d (%s) avg=%.9g\n", n, b, b >= 0 ? s[b].name : "-", avg);
    }
    return 0;
}
