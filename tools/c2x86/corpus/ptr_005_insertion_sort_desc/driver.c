#include <stdio.h>

void insertion_sort_desc(double *a, int n);

int main(void)
{
    double a[] = {0.5, -1.25, 3.0, 3.0, 1e-9, -7.5, 100.0, 0.0};
    insertion_sort_desc(a, 8);
    for (int i = 0; i < 8; i++)
        printf("%g ", a[i]);
    printf("\n");
    double b[] = {1.0, 2.0, 3.0};
    insertion_sort_desc(b, 2);
    printf("%g %g %g\n", b[0], b[1], b[2]);
    insertion_sort_desc(b + 1, 2);
    printf("%g %g %g\n", b[0], b[1], b[2]);
    insertion_sort_desc(b, 0);
    printf("%g %g %g\n", b[0], b[1], b[2]);
    double c[] = {-0.0, 0.0, -1e300, 1e300, 5e-324};
    insertion_sort_desc(c, 5);
    printf("%g %g %g %g %g\n", c[0], c[1], c[2], c[3], c[4]);
    return 0;
}
