#include <stdio.h>

int bmi_class(double kg, double cm, double *bmi_out);

int main(void)
{
    double kg[] = {50.0, 70.0, 85.0, 110.0, 57.8, 72.25, 45.5};
    double cm[] = {180.0, 175.0, 170.0, 165.0, 176.7, 170.0, 160.0};
    for (int i = 0; i < 7; i++) {
        double b;
        int c = bmi_class(kg[i], cm[i], &b);
        printf("%.1f kg %.1f cm -> bmi %.6g class %d\n", kg[i], cm[i], b, c);
    }
    return 0;
}
