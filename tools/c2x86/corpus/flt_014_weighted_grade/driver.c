#include <stdio.h>

float weighted_grade(float homework, float midterm, float final_exam, int bonus);

int main(void)
{
    printf("%.9g\n", weighted_grade(80.0f, 70.0f, 90.0f, 0));
    printf("%.9g\n", weighted_grade(80.0f, 70.0f, 90.0f, 1));
    printf("%.9g\n", weighted_grade(100.0f, 100.0f, 99.0f, 1));
    printf("%.9g\n", weighted_grade(0.0f, 0.0f, 0.0f, 0));
    printf("%.9g\n", weighted_grade(55.5f, 61.25f, 48.75f, 1));
    printf("%.9g\n", weighted_grade(33.3f, 66.6f, 99.9f, 0));
    return 0;
}
