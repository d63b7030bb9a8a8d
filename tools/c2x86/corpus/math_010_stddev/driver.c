#include <stdio.h>

double sample_stddev(const double *x, int n, double *mean_out);

int main(void)
{
    double a[] = {2, 4, 4, 4, 5, 5, 7, 9};
    double b[] = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
    double m;
    double s = sample_stddev(a, 8, &m);
    printf("%.10g %.10g\n", s, m);
    s = sample_stddev(b, 4, &m);
    printf("%.10g %.10g\n", s, m);
    s = sample_stddev(a, 1, &m);
    printf("%.10g %.10g\n", s, m);
    s = sample_stddev(a, 0, &m);
    printf("%.10g %.10g\n", s, m);
    s = sample_stddev(a + 5, 3, &m);
    printf("%.10g %.10g\n", s, m);
    return 0;
}
